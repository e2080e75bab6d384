//! Call-Chain Clustering (C³, "hfsort"): lld's `CallGraphSort` algorithm, for both formats.
//!
//! Why this exists: ld.lld (`--call-graph-profile-sort=hfsort`) and lld-link (its only
//! algorithm) order the sections of a call graph the same way: merge each section into its
//! heaviest caller's cluster unless that makes the cluster too big or too sparse, then sort the
//! clusters by density. The graph is read differently by each format (`elf/cgsort.rs`,
//! `coff/cgsort.rs`); the algorithm only sees node sizes and weighted edges.

/// One cluster of C³: a circular list of sections (`next`/`prev`), its size and weight.
struct Cluster {
    next: usize,
    prev: usize,
    size: u64,
    weight: u64,
    initial_weight: u64,
    /// The heaviest incoming edge from another section: (section, weight).
    best_pred: Option<(usize, u64)>,
}

impl Cluster {
    fn density(&self) -> f64 {
        if self.size == 0 {
            0.0
        } else {
            self.weight as f64 / self.size as f64
        }
    }
}

/// A merge may not make the cluster's density more than this many times worse.
const MAX_DENSITY_DEGRADATION: f64 = 8.0;
/// Clusters stop growing at 1 MiB.
const MAX_CLUSTER_SIZE: u64 = 1024 * 1024;

/// Call-Chain Clustering over `sizes.len()` sections and `edges` (from, to, weight): the order
/// of every section that appears in the graph.
pub fn hfsort(sizes: &[u64], edges: &[(usize, usize, u64)]) -> Vec<usize> {
    let n = sizes.len();
    let mut cs: Vec<Cluster> = (0..n).map(|i| Cluster { next: i, prev: i, size: sizes[i], weight: 0, initial_weight: 0, best_pred: None }).collect();
    for &(from, to, w) in edges {
        cs[to].weight += w;
        if from == to {
            continue;
        }
        if cs[to].best_pred.is_none_or(|(_, bw)| bw < w) {
            cs[to].best_pred = Some((from, w));
        }
    }
    for c in &mut cs {
        c.initial_weight = c.weight;
    }
    let mut leaders: Vec<usize> = (0..n).collect();
    fn leader(leaders: &mut [usize], mut v: usize) -> usize {
        while leaders[v] != v {
            leaders[v] = leaders[leaders[v]];
            v = leaders[v];
        }
        v
    }
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.sort_by(|&a, &b| cs[b].density().partial_cmp(&cs[a].density()).unwrap_or(std::cmp::Ordering::Equal));
    for &l in &sorted {
        let Some((pred, pw)) = cs[l].best_pred else { continue };
        // An edge carrying under a tenth of the section's weight is not worth following.
        if pw * 10 <= cs[l].initial_weight {
            continue;
        }
        let pl = leader(&mut leaders, pred);
        if pl == l || cs[l].size + cs[pl].size > MAX_CLUSTER_SIZE {
            continue;
        }
        let new_density = (cs[pl].weight + cs[l].weight) as f64 / (cs[pl].size + cs[l].size) as f64;
        if new_density < cs[pl].density() / MAX_DENSITY_DEGRADATION {
            continue;
        }
        leaders[l] = pl;
        // Append l's ring after pl's.
        let (tail1, tail2) = (cs[pl].prev, cs[l].prev);
        cs[pl].prev = tail2;
        cs[tail2].next = pl;
        cs[l].prev = tail1;
        cs[tail1].next = l;
        cs[pl].size += cs[l].size;
        cs[pl].weight += cs[l].weight;
        cs[l].size = 0;
        cs[l].weight = 0;
    }
    let mut heads: Vec<usize> = (0..n).filter(|&i| cs[i].size > 0).collect();
    heads.sort_by(|&a, &b| cs[b].density().partial_cmp(&cs[a].density()).unwrap_or(std::cmp::Ordering::Equal));
    let mut order = Vec::with_capacity(n);
    for h in heads {
        let mut i = h;
        loop {
            order.push(i);
            i = cs[i].next;
            if i == h {
                break;
            }
        }
    }
    order
}

/// lld's `to_integer` with an automatic radix: `0x`/`0X` hexadecimal, `0b`/`0B` binary, `0o`
/// or a leading `0` octal, else decimal; the whole field must be a number that fits.
pub fn parse_weight(s: &str) -> Option<u64> {
    let (digits, radix) = if let Some(d) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (d, 16)
    } else if let Some(d) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (d, 2)
    } else if let Some(d) = s.strip_prefix("0o") {
        (d, 8)
    } else if s.len() > 1 && s.starts_with('0') && s.as_bytes()[1].is_ascii_digit() {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hfsort_puts_hot_caller_and_callee_together() {
        // 0 calls 2 heavily, 1 is cold, 3 calls 1 rarely.
        let sizes = [100, 100, 100, 100];
        let edges = [(0, 2, 1000), (3, 1, 1)];
        let order = hfsort(&sizes, &edges);
        let pos = |x: usize| order.iter().position(|&y| y == x).unwrap();
        assert_eq!(pos(2), pos(0) + 1, "callee right after its hot caller: {order:?}");
        assert!(pos(0) < pos(1), "hot cluster first: {order:?}");
        assert_eq!(order.len(), 4);
    }

    #[test]
    fn hfsort_respects_cluster_size_limit() {
        let sizes = [MAX_CLUSTER_SIZE, 10];
        let order = hfsort(&sizes, &[(0, 1, 100)]);
        // Too big to merge: two clusters, the denser (small callee) first.
        assert_eq!(order, vec![1, 0]);
    }
}
