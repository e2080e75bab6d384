//! Cache-Directed Sort (CDSort): the function order `--call-graph-profile-sort=cdsort`, lld's
//! default, gives the sections a call graph profile connects.
//!
//! Why it exists: ld.lld 22 orders hot code with LLVM's `computeCacheDirectedLayout`
//! (CodeLayout.cpp) rather than C³ (`util::hfsort`), and a drop-in must place every function
//! where lld does. This is our own implementation of the same greedy algorithm, with the same
//! model, constants, floating-point evaluation order and tie-breakers, so that equal inputs give
//! the identical order.
//!
//! The algorithm: every function starts as its own chain. Two chains joined by calls may be
//! concatenated (in either order); the gain of a concatenation is
//!
//! * the change in *distance locality*, Σ calls · distance^-0.25 (a call assumed at the middle of
//!   its caller, a call to the next byte counted at distance 0.1), against the same calls spread
//!   over the whole hot code; plus
//! * a quarter of the change in *frequency locality*: the expected misses of a 16-entry cache of
//!   2 KiB pages, where a chain's page stays cached with probability growing with its density;
//!
//! divided by the smaller chain's size when positive (short chains merge first). The pair with
//! the best gain is merged, the gains of the new chain's neighbours are recomputed, until no
//! merge gains (or a chain would exceed 128 functions). Chains are then laid out by decreasing
//! density (samples per byte), ties by their first function's index.
//!
//! Determinism: the candidate pairs form an ordered set keyed by (gain descending, first node of
//! the caller-side chain, first node of the callee-side chain); equal forward and backward gains
//! (within 1e-8) keep the original function order. Edges, their calls and the chains' neighbour
//! lists are kept in the same insertion order as LLVM's, because the gains are sums of floating
//! point terms and the order of addition shows in the last bits.

use std::cmp::Reverse;
use std::collections::BTreeSet;

/// Gains closer than this are equal.
const EPS: f64 = 1e-8;

/// LLVM's `CDSortConfig` defaults (lld passes none of its own).
struct Config {
    /// Entries of the modelled cache.
    cache_entries: u32,
    /// Size of one cache entry (a page of code) in bytes.
    cache_size: u32,
    /// Chains of more functions are not built.
    max_chain_size: usize,
    /// Exponent of the distance in the distance locality.
    distance_power: f64,
    /// Weight of the frequency locality against the distance locality.
    frequency_scale: f64,
}

const CONFIG: Config = Config { cache_entries: 16, cache_size: 2048, max_chain_size: 128, distance_power: 0.25, frequency_scale: 0.25 };

/// A call site: caller, callee, how often, and where in the caller.
struct Call {
    from: usize,
    to: usize,
    count: u64,
    offset: u64,
}

/// The best way found to join an edge's two chains.
#[derive(Clone, Copy)]
struct Gain {
    score: f64,
    /// `false`: the edge's source chain first; `true`: its destination chain first.
    dst_first: bool,
}

impl Gain {
    /// "Not computed yet" (LLVM's default `MergeGainT`).
    const NONE: Gain = Gain { score: -1.0, dst_first: false };
}

/// The calls between two chains (or, after merging, within one: a self edge, never a
/// candidate). Its direction is the first call's that created it.
struct Edge {
    src: usize,
    dst: usize,
    calls: Vec<usize>,
    gain: Gain,
    /// The key under which the edge is in the candidate set.
    queued: Option<Key>,
}

/// Candidate order: best gain first (positive gains only, whose bit patterns order as the
/// values), then the source chain's id, the destination chain's id; the edge index only
/// completes the key (the ids already differ between live candidates).
type Key = (Reverse<u64>, usize, usize, usize);

struct Chain {
    /// The index of the chain's first node.
    id: usize,
    /// Sum of the nodes' execution counts (a double, as LLVM's, summed in merge order).
    count: f64,
    size: u64,
    nodes: Vec<usize>,
    /// Adjacent chains (including the chain itself, for a self edge) and the edge to each, in
    /// insertion order.
    edges: Vec<(usize, usize)>,
}

impl Chain {
    fn density(&self) -> f64 {
        self.count / self.size as f64
    }

    fn edge_to(&self, other: usize) -> Option<usize> {
        self.edges.iter().find(|&&(c, _)| c == other).map(|&(_, e)| e)
    }

    fn remove_edge_to(&mut self, other: usize) {
        if let Some(i) = self.edges.iter().position(|&(c, _)| c == other) {
            self.edges.remove(i);
        }
    }
}

struct Sorter {
    /// Node sizes (at least 1).
    sizes: Vec<u64>,
    /// Node execution counts (after raising them to the calls' counts).
    counts: Vec<u64>,
    /// The chain each node is in.
    chain_of: Vec<usize>,
    calls: Vec<Call>,
    /// Chain `i` starts as node `i`'s; merged-away chains are left empty.
    chains: Vec<Chain>,
    edges: Vec<Edge>,
    /// Scratch: each node's address within the merged chain being evaluated.
    addr: Vec<u64>,
    /// Sum of the input node counts (the calls' total weight, from lld).
    total_samples: u64,
    /// Total size of the nodes with a non-zero input count.
    total_size: u64,
}

/// The Cache-Directed Sort order of all `sizes.len()` nodes (input sections) given the calls
/// `edges` (from, to, weight) in the call graph's first-seen order, as ld.lld's
/// `computeCacheDirectedSortOrder`: a node's count is the weight of its incoming calls, calls of
/// weight 0 and recursive calls are dropped, and each call is assumed at the middle of its
/// caller.
pub fn cache_directed_sort(sizes: &[u64], edges: &[(usize, usize, u64)]) -> Vec<usize> {
    let n = sizes.len();
    let mut in_weight = vec![0u64; n];
    let mut calls = Vec::new();
    for &(from, to, w) in edges {
        if w == 0 || from == to {
            continue;
        }
        calls.push(Call { from, to, count: w, offset: sizes[from].div_ceil(2) });
        in_weight[to] = in_weight[to].wrapping_add(w);
    }
    let mut s = Sorter::new(sizes, &in_weight, calls);
    s.merge_chain_pairs();
    s.concat_chains()
}

impl Sorter {
    fn new(sizes: &[u64], counts: &[u64], calls: Vec<Call>) -> Sorter {
        let n = sizes.len();
        let sizes: Vec<u64> = sizes.iter().map(|&s| s.max(1)).collect();
        let mut total_samples = 0u64;
        let mut total_size = 0u64;
        for i in 0..n {
            total_samples = total_samples.wrapping_add(counts[i]);
            if counts[i] > 0 {
                total_size += sizes[i];
            }
        }
        // A node runs at least as often as its hottest call in or out, and as often as all its
        // calls in, and all its calls out, together.
        let mut counts = counts.to_vec();
        let mut out_calls: Vec<Vec<usize>> = vec![Vec::new(); n];
        let (mut in_sum, mut out_sum) = (vec![0u64; n], vec![0u64; n]);
        for (k, c) in calls.iter().enumerate() {
            counts[c.from] = counts[c.from].max(c.count);
            counts[c.to] = counts[c.to].max(c.count);
            out_calls[c.from].push(k);
            out_sum[c.from] = out_sum[c.from].wrapping_add(c.count);
            in_sum[c.to] = in_sum[c.to].wrapping_add(c.count);
        }
        for i in 0..n {
            counts[i] = counts[i].max(in_sum[i]).max(out_sum[i]);
        }
        let chains: Vec<Chain> = (0..n).map(|i| Chain { id: i, count: counts[i] as f64, size: sizes[i], nodes: vec![i], edges: Vec::new() }).collect();
        let mut s = Sorter { sizes, counts, chain_of: (0..n).collect(), calls, chains, edges: Vec::new(), addr: vec![0; n], total_samples, total_size };
        // One edge per pair of (single-node) chains, in callers' order, then calls' order.
        for (from, outs) in out_calls.iter().enumerate() {
            for &k in outs {
                let to = s.calls[k].to;
                if let Some(e) = s.chains[from].edge_to(to) {
                    s.edges[e].calls.push(k);
                    continue;
                }
                let e = s.edges.len();
                s.edges.push(Edge { src: from, dst: to, calls: vec![k], gain: Gain::NONE, queued: None });
                s.chains[from].edges.push((to, e));
                s.chains[to].edges.push((from, e));
            }
        }
        s
    }

    fn key(&self, e: usize) -> Key {
        let edge = &self.edges[e];
        (Reverse(edge.gain.score.to_bits()), self.chains[edge.src].id, self.chains[edge.dst].id, e)
    }

    fn enqueue(&mut self, queue: &mut BTreeSet<Key>, e: usize) {
        let gain = self.best_gain(e);
        self.edges[e].gain = gain;
        if gain.score > EPS {
            let k = self.key(e);
            queue.insert(k);
            self.edges[e].queued = Some(k);
        }
    }

    fn dequeue(&mut self, queue: &mut BTreeSet<Key>, e: usize) {
        if let Some(k) = self.edges[e].queued.take() {
            queue.remove(&k);
        }
    }

    /// Merges the best pair of chains while a merge gains anything.
    fn merge_chain_pairs(&mut self) {
        let mut queue: BTreeSet<Key> = BTreeSet::new();
        for node in 0..self.sizes.len() {
            if self.counts[node] == 0 {
                continue;
            }
            let c = self.chain_of[node];
            for i in 0..self.chains[c].edges.len() {
                let e = self.chains[c].edges[i].1;
                if self.edges[e].src == self.edges[e].dst || self.edges[e].gain.score != -1.0 {
                    continue;
                }
                self.enqueue(&mut queue, e);
            }
        }
        while let Some(top) = queue.pop_first() {
            let best = top.3;
            self.edges[best].queued = None;
            let (into, from) = (self.edges[best].src, self.edges[best].dst);
            // Every candidate involving either chain is outdated.
            for c in [into, from] {
                for i in 0..self.chains[c].edges.len() {
                    let e = self.chains[c].edges[i].1;
                    self.dequeue(&mut queue, e);
                }
            }
            let dst_first = self.edges[best].gain.dst_first;
            self.merge_chains(into, from, dst_first);
            for i in 0..self.chains[into].edges.len() {
                let e = self.chains[into].edges[i].1;
                let (a, b) = (self.edges[e].src, self.edges[e].dst);
                if a == b || self.chains[a].nodes.len() + self.chains[b].nodes.len() > CONFIG.max_chain_size {
                    continue;
                }
                self.enqueue(&mut queue, e);
            }
        }
    }

    /// The better of joining edge `e`'s chains source-first or destination-first; on a tie the
    /// one keeping the chains' original order.
    fn best_gain(&mut self, e: usize) -> Gain {
        let (src, dst) = (self.edges[e].src, self.edges[e].dst);
        let (src_id, dst_id) = (self.chains[src].id, self.chains[dst].id);
        let mut gain = Gain::NONE;
        for dst_first in [false, true] {
            let new = Gain { score: self.merge_gain(e, src, dst, dst_first), dst_first };
            if (gain.score - new.score).abs() < EPS {
                if (!dst_first && src_id < dst_id) || (dst_first && src_id > dst_id) {
                    gain = new;
                }
            } else if new.score > gain.score + EPS {
                gain = new;
            }
        }
        gain
    }

    /// The gain of concatenating chains `pred` and `succ` (in that order, or reversed).
    fn merge_gain(&mut self, e: usize, pred: usize, succ: usize, reversed: bool) -> f64 {
        let freq = self.freq_gain(pred, succ);
        let (first, second) = if reversed { (succ, pred) } else { (pred, succ) };
        let mut at = 0u64;
        for c in [first, second] {
            for &node in &self.chains[c].nodes {
                self.addr[node] = at;
                at += self.sizes[node];
            }
        }
        let dist = self.dist_gain(e);
        let mut score = dist + CONFIG.frequency_scale * freq;
        if score >= 0.0 {
            score /= self.chains[pred].size.min(self.chains[succ].size) as f64;
        }
        score
    }

    /// The probability that a page of a chain of this density has left the cache.
    fn miss_probability(&self, density: f64) -> f64 {
        let page_samples = density * CONFIG.cache_size as f64;
        let total = self.total_samples as f64;
        if page_samples >= total {
            return 0.0;
        }
        let p = page_samples / total;
        (1.0 - p).powf(CONFIG.cache_entries as f64)
    }

    /// The expected cache misses saved by joining two chains (independent of their order).
    fn freq_gain(&self, pred: usize, succ: usize) -> f64 {
        let (a, b) = (&self.chains[pred], &self.chains[succ]);
        let cur = a.count * self.miss_probability(a.density()) + b.count * self.miss_probability(b.density());
        let merged_count = a.count + b.count;
        let merged_size = (a.size + b.size) as f64;
        let new = merged_count * self.miss_probability(merged_count / merged_size);
        cur - new
    }

    fn dist_score(&self, from: u64, to: u64, count: u64) -> f64 {
        let dist = from.abs_diff(to);
        let d = if dist == 0 { 0.1 } else { dist as f64 };
        count as f64 * d.powf(-CONFIG.distance_power)
    }

    /// The distance locality of edge `e`'s calls at the addresses in `self.addr`, against the
    /// same calls spanning all hot code.
    fn dist_gain(&self, e: usize) -> f64 {
        let (mut cur, mut new) = (0.0f64, 0.0f64);
        for &k in &self.edges[e].calls {
            let c = &self.calls[k];
            new += self.dist_score(self.addr[c.from] + c.offset, self.addr[c.to], c.count);
            cur += self.dist_score(0, self.total_size, c.count);
        }
        new - cur
    }

    /// Appends chain `from` to chain `into` (or prepends it when `from_first`), keeping `into`.
    fn merge_chains(&mut self, into: usize, from: usize, from_first: bool) {
        let from_nodes = std::mem::take(&mut self.chains[from].nodes);
        let into_nodes = std::mem::take(&mut self.chains[into].nodes);
        let nodes = if from_first { [from_nodes, into_nodes].concat() } else { [into_nodes, from_nodes].concat() };
        let (count, size) = (self.chains[from].count, self.chains[from].size);
        let c = &mut self.chains[into];
        c.count += count;
        c.size += size;
        c.id = nodes[0];
        for &node in &nodes {
            self.chain_of[node] = into;
        }
        self.chains[into].nodes = nodes;
        self.merge_edges(into, from);
    }

    /// Moves chain `other`'s edges to chain `this`: an edge to a chain `this` is already joined
    /// to gives it its calls, any other is re-pointed.
    fn merge_edges(&mut self, this: usize, other: usize) {
        let other_edges = std::mem::take(&mut self.chains[other].edges);
        for (dst_chain, dst_edge) in other_edges {
            let target = if dst_chain == other { this } else { dst_chain };
            match self.chains[this].edge_to(target) {
                None => {
                    let edge = &mut self.edges[dst_edge];
                    if edge.src == other {
                        edge.src = this;
                    }
                    if edge.dst == other {
                        edge.dst = this;
                    }
                    self.chains[this].edges.push((target, dst_edge));
                    if dst_chain != this && dst_chain != other {
                        self.chains[dst_chain].edges.push((this, dst_edge));
                    }
                }
                Some(cur) => {
                    let moved = std::mem::take(&mut self.edges[dst_edge].calls);
                    self.edges[cur].calls.extend(moved);
                }
            }
            if dst_chain != other {
                self.chains[dst_chain].remove_edge_to(other);
            }
        }
    }

    /// All nodes, chain by chain, densest chain first (ties: smaller id first).
    fn concat_chains(&self) -> Vec<usize> {
        let mut sorted: Vec<(f64, usize, usize)> = Vec::new();
        for (i, c) in self.chains.iter().enumerate() {
            if c.nodes.is_empty() {
                continue;
            }
            let (mut size, mut count) = (0.0f64, 0.0f64);
            for &node in &c.nodes {
                size += self.sizes[node] as f64;
                count += self.counts[node] as f64;
            }
            sorted.push((count / size, c.id, i));
        }
        sorted.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        sorted.iter().flat_map(|&(_, _, i)| self.chains[i].nodes.iter().copied()).collect()
    }
}

// The expected orders of these small graphs were worked out by hand and checked against
// ld.lld-22: objects with functions of these sizes, an ordering file numbering the nodes in
// index order (`fi fi 1` self calls first) and the edges, `nm -n` of the output.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_once() {
        let sizes = [10, 20, 30, 40, 50];
        let order = cache_directed_sort(&sizes, &[(0, 1, 5), (3, 3, 7), (2, 4, 0)]);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4], "{order:?}");
    }

    #[test]
    fn hot_pair_adjacent_and_first() {
        // 0 → 1 is hot, 2 → 3 is lukewarm; 4 is only reached recursively (cold).
        let sizes = [64, 64, 64, 64, 64];
        let order = cache_directed_sort(&sizes, &[(0, 1, 1000), (2, 3, 10), (4, 4, 50)]);
        // Two chains [0 1] and [2 3] (original order kept on equal gains), the hotter first,
        // then the cold node.
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn caller_first_and_no_merge_that_lengthens_calls() {
        // A small caller at its middle calls a big callee: caller first puts the call 32 bytes
        // from its target, callee first 4032 bytes; the chain is [0 1].
        assert_eq!(cache_directed_sort(&[64, 4000], &[(0, 1, 100)]), vec![0, 1]);
        // The same graph numbered the other way round gives the same layout.
        assert_eq!(cache_directed_sort(&[4000, 64], &[(1, 0, 100)]), vec![1, 0]);
        // A big caller of a small callee: merged, the call would span 2000 bytes, more than all
        // hot code (the 16-byte callee) spans, so nothing merges and the denser callee (100
        // calls in 16 bytes, against 100 in 4000) goes first.
        assert_eq!(cache_directed_sort(&[4000, 16], &[(0, 1, 100)]), vec![1, 0]);
    }

    #[test]
    fn equal_gains_keep_the_original_order() {
        // Calls both ways with equal weights between equal sizes: either order of the pair
        // gives the same gain, and the one keeping the input order wins, whichever call the
        // graph lists first.
        assert_eq!(cache_directed_sort(&[100, 100], &[(0, 1, 50), (1, 0, 50)]), vec![0, 1]);
        assert_eq!(cache_directed_sort(&[100, 100], &[(1, 0, 50), (0, 1, 50)]), vec![0, 1]);
        // The same behind a denser pair, which goes first.
        let order = cache_directed_sort(&[100, 100, 10, 10], &[(2, 3, 900), (0, 1, 50), (1, 0, 50)]);
        assert_eq!(order, vec![2, 3, 0, 1]);
    }

    #[test]
    fn equal_candidates_merge_lower_ids_first() {
        // 1 calls 0 and 2 equally: both merges gain the same, and the pair with the smaller
        // ids, (1, 0), merges first into the chain [1 0]. Joining 2 to it then gains the same
        // either way round (the call spans 150 bytes both ways), and the order keeping the
        // chains' ids ascending wins: [1 0 2]. Merging (1, 2) first would give [0 1 2].
        assert_eq!(cache_directed_sort(&[100, 100, 100], &[(1, 0, 40), (1, 2, 40)]), vec![1, 0, 2]);
    }

    #[test]
    fn cold_nodes_last_in_index_order() {
        let sizes = [100, 100, 100, 100, 100, 100];
        // 5 and 2 are cold (no non-zero calls); 3 → 1 hot.
        let order = cache_directed_sort(&sizes, &[(3, 1, 500), (5, 2, 0), (2, 2, 9), (0, 4, 1)]);
        // Chains [3 1] (1000 samples in 200 bytes) and [0 4] (2 samples), then the cold nodes
        // by index.
        assert_eq!(order, vec![3, 1, 0, 4, 2, 5]);
    }

    #[test]
    fn chains_grow_along_hot_calls() {
        // A hot path 0 → 1 → 2 → 3 plus a rarely called helper 4 of the same size.
        let sizes = [128; 5];
        let edges = [(0, 1, 900), (1, 2, 800), (2, 3, 700), (3, 4, 1)];
        let order = cache_directed_sort(&sizes, &edges);
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn deterministic() {
        // A skewed graph with many equal weights (ties everywhere).
        let n = 60;
        let sizes: Vec<u64> = (0..n).map(|i| 16 + (i as u64 * 37) % 300).collect();
        let mut edges = Vec::new();
        for i in 0..n {
            edges.push((i, (i * 7 + 3) % n, 10));
            edges.push((i, (i * 13 + 1) % n, if i % 5 == 0 { 1000 } else { 10 }));
        }
        let first = cache_directed_sort(&sizes, &edges);
        for _ in 0..5 {
            assert_eq!(cache_directed_sort(&sizes, &edges), first);
        }
        let mut sorted = first.clone();
        sorted.sort();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn chain_size_is_bounded() {
        // A long hot path of 300 functions: no chain may grow past 128 of them.
        let n = 300;
        let sizes = vec![32u64; n];
        let edges: Vec<(usize, usize, u64)> = (0..n - 1).map(|i| (i, i + 1, 1000)).collect();
        let calls = edges.iter().map(|&(from, to, count)| Call { from, to, count, offset: 16 }).collect();
        let mut in_weight = vec![0u64; n];
        for &(_, to, w) in &edges {
            in_weight[to] += w;
        }
        let mut s = Sorter::new(&sizes, &in_weight, calls);
        s.merge_chain_pairs();
        let lens: Vec<usize> = s.chains.iter().map(|c| c.nodes.len()).filter(|&l| l > 0).collect();
        assert!(lens.iter().all(|&l| l <= CONFIG.max_chain_size), "{lens:?}");
        assert!(lens.len() >= 3 && lens.iter().any(|&l| l > 64), "{lens:?}");
        assert_eq!(s.concat_chains().len(), n);
    }
}
