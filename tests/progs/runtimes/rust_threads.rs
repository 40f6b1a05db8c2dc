// Rust runtime (std threads, the System allocator = malloc): 4 named threads;
// thread k (0..3) makes 100 * (k + 1) blocks of 48 bytes in alloc_block,
// 1000 in all, and drops the first half of its blocks; the rest is kept
// until exit (mem::forget): 500 blocks, 24000 bytes live.
// Prints each thread's block count and byte sum; exit status 3.
use std::thread;

#[inline(never)]
fn alloc_block(k: u8, i: usize) -> Vec<u8> {
    let mut block = Vec::with_capacity(48);
    block.resize(48, k.wrapping_add(i as u8));
    block
}

fn work(k: u8) -> (usize, u64) {
    let n = 100 * (k as usize + 1);
    let mut blocks = Vec::with_capacity(n);
    for i in 0..n {
        blocks.push(alloc_block(k, i));
    }
    let sum = blocks.iter().flatten().map(|&b| b as u64).sum();
    let kept = blocks.split_off(n / 2);
    drop(blocks);
    std::mem::forget(kept);
    (n, sum)
}

fn main() {
    let workers: Vec<_> = (0..4u8)
        .map(|k| thread::Builder::new().name(format!("worker{}", k)).spawn(move || work(k)).unwrap())
        .collect();
    for (k, w) in workers.into_iter().enumerate() {
        let (n, sum) = w.join().unwrap();
        println!("worker{}: {} blocks, sum {}", k, n, sum);
    }
    std::process::exit(3);
}
