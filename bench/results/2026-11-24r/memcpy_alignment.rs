use std::time::Instant;
fn main() {
    let src_buf: Vec<u8> = (0..2_000_000usize).map(|i| (i * 7) as u8).collect();
    let mut dst_buf = vec![0u8; 200_000];
    let n = 100_000;
    for (so, dof) in [(0usize, 0usize), (0, 32), (0, 16), (16, 0), (32, 0), (1, 0), (0, 1), (8, 40), (48, 16)] {
        let s0 = (64 - (src_buf.as_ptr() as usize % 64)) % 64 + so;
        let d0 = (64 - (dst_buf.as_ptr() as usize % 64)) % 64 + dof;
        let reps = 20000;
        let t = Instant::now();
        for r in 0..reps {
            let off = s0 + (r % 10) * 100_032;
            let chunk: usize = std::env::var("CHUNK").ok().and_then(|v| v.parse().ok()).unwrap_or(n);
            for (d, s) in dst_buf[d0..d0 + n].chunks_mut(chunk).zip(src_buf[off..off + n].chunks(chunk)) {
                d.copy_from_slice(s);
            }
            std::hint::black_box(&dst_buf);
        }
        let s = t.elapsed().as_secs_f64();
        println!("src%64={so} dst%64={dof}: {:.1} GB/s  {:.2} us/copy", (reps * n) as f64 / s / 1e9, s / reps as f64 * 1e6);
    }
}
