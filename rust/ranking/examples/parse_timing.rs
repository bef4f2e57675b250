//! Times the parser on texts separated by NUL bytes: `cargo run --release --example parse_timing -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("file of NUL-separated texts");
    let data = std::fs::read_to_string(path).expect("readable UTF-8 file");
    let texts: Vec<&str> = data.split('\0').collect();
    let labels = ['A', 'B', 'C', 'D'];
    let start = std::time::Instant::now();
    let mut complete = 0;
    for _ in 0..10 {
        for t in &texts {
            if ranking::parse::parse_with_letters(t, &labels).status == ranking::ParseStatus::Complete {
                complete += 1;
            }
        }
    }
    let per = start.elapsed().as_secs_f64() / (10 * texts.len()) as f64;
    println!("{} texts, {:.2} us per text, {} complete", texts.len(), per * 1e6, complete / 10);
}
