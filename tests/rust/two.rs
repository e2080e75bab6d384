// Why this exists: issue 35's reproducer, compiled by tests/rust/ with
// `rustc -O -C linker-plugin-lto -C codegen-units=4 -C linker=clang-22 -C link-arg=-fuse-ld=<dtld>`.
// Its modules and generic code land in different codegen units that call each other through
// hidden symbols; before commit 159e72e dtld's thin link dropped their names and the link failed
// with "undefined hidden symbol" errors (ld.lld-22 linked it). It prints a few lines that the
// trials compare with ld.lld-22's build of it.

mod shapes {
    pub trait Area {
        fn area(&self) -> f64;
        fn name(&self) -> String;
    }
    pub struct Square(pub f64);
    pub struct Disc(pub f64);
    impl Area for Square {
        fn area(&self) -> f64 {
            self.0 * self.0
        }
        fn name(&self) -> String {
            format!("square {}", self.0)
        }
    }
    impl Area for Disc {
        fn area(&self) -> f64 {
            3.0 * self.0 * self.0
        }
        fn name(&self) -> String {
            format!("disc {}", self.0)
        }
    }
    #[inline(never)]
    pub fn total(v: &[Box<dyn Area>]) -> f64 {
        v.iter().map(|s| s.area()).sum()
    }
}

mod stats {
    use std::collections::BTreeMap;
    #[inline(never)]
    pub fn histogram<T: Ord + Clone>(v: &[T]) -> BTreeMap<T, usize> {
        let mut m = BTreeMap::new();
        for x in v {
            *m.entry(x.clone()).or_insert(0) += 1;
        }
        m
    }
    pub fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(|w| w.to_lowercase()).collect()
    }
}

fn main() {
    let v: Vec<Box<dyn shapes::Area>> = vec![Box::new(shapes::Square(2.0)), Box::new(shapes::Disc(1.5))];
    for s in &v {
        println!("{} {}", s.name(), s.area());
    }
    println!("total {}", shapes::total(&v));
    println!("{:?}", stats::histogram(&stats::words("a b A c b a")));
    println!("{:?}", stats::histogram(&[3u32, 1, 3, 2]));
}
