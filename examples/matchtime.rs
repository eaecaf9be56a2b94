use isadb::query::Matcher;
use std::time::Instant;
fn main() {
    let specs = isadb::spec::load_dir(std::path::Path::new("specs")).unwrap();
    let mut m = Matcher::new(&specs);
    let filter = std::env::args().nth(1).unwrap_or_default();
    let mut times = vec![];
    for ins in specs.instructions.iter().filter(|i| i.name.contains(&filter)).take(300) {
        let t = Instant::now();
        let f = m.facts(ins).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        times.push((ms, ins.name.clone(), f.iter().map(|f| format!("{} [{}] {:.0}ms", f.idiom, f.binding, f.ms)).collect::<Vec<_>>()));
    }
    let total: f64 = times.iter().map(|t| t.0).sum();
    times.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    for t in times.iter().take(15) { println!("{:8.1} {} {:?}", t.0, t.1, t.2); }
    println!("total {total:.0} ms over {}", times.len());
}
