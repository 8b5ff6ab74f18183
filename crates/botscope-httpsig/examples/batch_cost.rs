//! Time per Ed25519 signature check, alone and in batches of 2 to 64
//! (`cargo run --release -p botscope-httpsig --example batch_cost`).

use botscope_httpsig::{
    KeySet, Policy, Request, SignSpec, SigningKey, check_batch, prepare_request,
};

fn main() {
    let key = SigningKey::generate().expect("key");
    let mut keys = KeySet::new();
    keys.add_key(Some("https://a.example"), key.public());
    let now = 1_800_000_000;
    let prepared: Vec<_> = (0..64)
        .map(|i| {
            let req = Request::new("GET", "https", "shop.example", "/", vec![]);
            let spec = SignSpec::new(Some("https://a.example"), now, 300, Some(format!("n{i}")));
            let s = botscope_httpsig::sign_request(&req, &key, &spec).expect("sign");
            let req = Request::new("GET", "https", "shop.example", "/", s.headers());
            prepare_request(&req, &keys, now, &Policy::default())
        })
        .collect();
    // Reading the fields and building the base, without the check.
    let heads: Vec<Vec<(String, String)>> = (0..64)
        .map(|i| {
            let req = Request::new("GET", "https", "shop.example", "/", vec![]);
            let spec = SignSpec::new(Some("https://a.example"), now, 300, Some(format!("n{i}")));
            botscope_httpsig::sign_request(&req, &key, &spec)
                .expect("sign")
                .headers()
        })
        .collect();
    let t = std::time::Instant::now();
    let rounds = 50_000;
    for r in 0..rounds {
        let req = Request::new("GET", "https", "shop.example", "/", heads[r % 64].clone());
        let p = prepare_request(&req, &keys, now, &Policy::default());
        assert_eq!(p.checks().len(), 1);
    }
    println!(
        "prepare (fields read, base built): {:.1} µs a request",
        t.elapsed().as_secs_f64() * 1e6 / rounds as f64
    );
    for n in [1usize, 2, 4, 8, 16, 32, 64] {
        let rounds = 20_000 / n;
        let t = std::time::Instant::now();
        for _ in 0..rounds {
            let flat: Vec<_> = prepared[..n].iter().flat_map(|p| p.checks()).collect();
            assert!(check_batch(&flat).iter().all(|&b| b));
        }
        let per = t.elapsed().as_secs_f64() * 1e6 / (rounds * n) as f64;
        println!("batch of {n:>2}: {per:.1} µs a signature");
    }
}
