//! The roq analysis's scoring kernel: SSIM and the squared error of two 8-bit luma planes,
//! giving the same bits as the numpy definition in `priolab/workloads/roq/quality.py` (the
//! analysis scores every sent frame of every run, and that numpy code cost more CPU than a sim
//! run itself).
//!
//! SSIM uses 8 × 8 box windows at every valid position. Per window, with N = 64 pixels and the
//! exact integer window sums Sx, Sy, Sq = Σ(x² + y²) and Sxy = Σx·y (an 8 × 8 sum of products
//! of 8-bit values is below 2²³, so i32 holds every sum and every term below):
//!
//! ```text
//! num = (2.0·(Sx·Sy) + k1) · (2.0·(N·Sxy − Sx·Sy) + k2)
//! den = ((Sx² + Sy²) + k1) · ((N·Sq − (Sx² + Sy²)) + k2)
//! ```
//!
//! the products and sums in parentheses taken in i32 and the rest in f64, operation by
//! operation as numpy evaluates quality.py's expression (k1 = C1·N², k2 = C2·N², handed in by
//! the caller so both sides use the same constants). The SSIM of the pair is the mean of
//! num ÷ den over the windows in row-major order, summed in numpy's pairwise order
//! ([`pairwise_sum`]) and divided by their count, as `np.mean` does. IEEE 754 rounds each of
//! these operations to one result and Rust contracts none of them into a fused multiply-add,
//! so the result is bit for bit numpy's, on any x86-64 CPU.
//!
//! The squared error is Σ(x − y)² as an integer: the caller's PSNR divides it by the pixel
//! count (exact as numpy's float sum of those integers is, below 2⁵³).
//!
//! [`roq_score_pairs`] is the C entry point that kernel.py calls through ctypes.

/// The window's side in pixels.
pub const WINDOW: usize = 8;
const N: i32 = (WINDOW * WINDOW) as i32;
/// The widest plane: a row's squared error, at most 255² a pixel, is summed in u32.
pub const MAX_WIDTH: usize = (u32::MAX / (255 * 255)) as usize;
/// numpy's block size for its unrolled pairwise summation (`PW_BLOCKSIZE`).
const PW_BLOCKSIZE: usize = 128;

/// The sum of `a` in the order numpy's `add.reduce` takes over a contiguous float64 array
/// (`pairwise_sum` in numpy's `loops_utils.h.src`): fewer than 8 values one by one; up to 128
/// in eight interleaved partial sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
/// (r6 + r7)), then the remainder one by one; more split in two at half the length rounded
/// down to a multiple of 8, each half summed so.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= PW_BLOCKSIZE {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let whole = n - n % 8;
        let mut i = 8;
        while i < whole {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[whole..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// Scores pairs of planes of one size; holds the working rows and the SSIM map, so scoring
/// many pairs allocates once.
pub struct Scorer {
    width: usize,
    height: usize,
    k1: f64,
    k2: f64,
    /// per column, the sums over the current 8 rows of x, y, x² + y² and x·y
    col: [Vec<i32>; 4],
    /// per window of the current row of windows, the same four sums over its 8 columns
    win: [Vec<i32>; 4],
    /// the sums over 2 and over 4 columns, on the way to `win`
    pairs: Vec<i32>,
    fours: Vec<i32>,
    /// the SSIM of every window, row-major
    map: Vec<f64>,
}

impl Scorer {
    /// Planes of `width` × `height` (each at least [`WINDOW`], the width at most
    /// [`MAX_WIDTH`]); `k1` = C1·N², `k2` = C2·N².
    pub fn new(width: usize, height: usize, k1: f64, k2: f64) -> Option<Scorer> {
        if width < WINDOW || height < WINDOW || width > MAX_WIDTH {
            return None;
        }
        let windows = (width - WINDOW + 1) * (height - WINDOW + 1);
        Some(Scorer {
            width,
            height,
            k1,
            k2,
            col: std::array::from_fn(|_| vec![0; width]),
            win: std::array::from_fn(|_| vec![0; width - WINDOW + 1]),
            pairs: vec![0; width - 1],
            fours: vec![0; width - 3],
            map: vec![0.0; windows],
        })
    }

    /// (SSIM, Σ(x − y)²) of plane `x` against plane `y`, each `width` × `height` bytes row by
    /// row. With AVX2 where the CPU has it: the same operations on wider registers, so the
    /// same bits (`avx2_gives_the_same_bits` checks it).
    pub fn score(&mut self, x: &[u8], y: &[u8]) -> (f64, u64) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above)
            return unsafe { self.score_avx2(x, y) };
        }
        self.score_any(x, y)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn score_avx2(&mut self, x: &[u8], y: &[u8]) -> (f64, u64) {
        self.score_any(x, y)
    }

    /// [`Scorer::score`] with the instructions of the build's target (inlined into
    /// `score_avx2` to be compiled for AVX2 there).
    #[inline(always)]
    fn score_any(&mut self, x: &[u8], y: &[u8]) -> (f64, u64) {
        let (w, h) = (self.width, self.height);
        assert!(
            x.len() == w * h && y.len() == w * h,
            "planes of {w} x {h} bytes"
        );
        let ow = w - WINDOW + 1;
        for c in &mut self.col {
            c.fill(0);
        }
        for r in 0..WINDOW {
            self.add_row(&x[r * w..(r + 1) * w], &y[r * w..(r + 1) * w], 1);
        }
        for i in 0..=h - WINDOW {
            if i > 0 {
                let (old, new) = (i - 1, i + WINDOW - 1);
                self.add_row(&x[old * w..(old + 1) * w], &y[old * w..(old + 1) * w], -1);
                self.add_row(&x[new * w..(new + 1) * w], &y[new * w..(new + 1) * w], 1);
            }
            for (col, win) in self.col.iter().zip(&mut self.win) {
                eights(col, &mut self.pairs, &mut self.fours, win);
            }
            let (k1, k2) = (self.k1, self.k2);
            let [wx, wy, wq, wp] = &self.win;
            let out = &mut self.map[i * ow..(i + 1) * ow];
            let sums = wx.iter().zip(wy).zip(wq).zip(wp);
            for (o, (((&sx, &sy), &sq), &sxy)) in out.iter_mut().zip(sums) {
                let sxsy = sx * sy;
                let s2 = sx * sx + sy * sy;
                let num = (2.0 * f64::from(sxsy) + k1) * (2.0 * f64::from(N * sxy - sxsy) + k2);
                let den = (f64::from(s2) + k1) * (f64::from(N * sq - s2) + k2);
                *o = num / den;
            }
        }
        let ssim = pairwise_sum(&self.map) / self.map.len() as f64;
        // a row's sum fits u32 (MAX_WIDTH)
        let sse = x
            .chunks(w)
            .zip(y.chunks(w))
            .map(|(rx, ry)| {
                let row: u32 = rx
                    .iter()
                    .zip(ry)
                    .map(|(&a, &b)| {
                        let d = i32::from(a) - i32::from(b);
                        (d * d) as u32
                    })
                    .sum();
                u64::from(row)
            })
            .sum();
        (ssim, sse)
    }

    /// Adds (`sign` 1) or removes (−1) one row of each plane to the column sums.
    #[inline(always)]
    fn add_row(&mut self, x: &[u8], y: &[u8], sign: i32) {
        let [cx, cy, cq, cp] = &mut self.col;
        let cols = cx
            .iter_mut()
            .zip(cy.iter_mut())
            .zip(cq.iter_mut())
            .zip(cp.iter_mut());
        for ((((cx, cy), cq), cp), (&a, &b)) in cols.zip(x.iter().zip(y)) {
            let (a, b) = (i32::from(a), i32::from(b));
            *cx += sign * a;
            *cy += sign * b;
            *cq += sign * (a * a + b * b);
            *cp += sign * (a * b);
        }
    }
}

/// `out[c]` = the sum of `col[c..c + 8]`, by doubling: pairs, fours, eights (exact in i32).
#[inline(always)]
fn eights(col: &[i32], pairs: &mut [i32], fours: &mut [i32], out: &mut [i32]) {
    for ((p, &a), &b) in pairs.iter_mut().zip(col).zip(&col[1..]) {
        *p = a + b;
    }
    for ((f, &a), &b) in fours.iter_mut().zip(&*pairs).zip(&pairs[2..]) {
        *f = a + b;
    }
    for ((o, &a), &b) in out.iter_mut().zip(&*fours).zip(&fours[4..]) {
        *o = a + b;
    }
}

/// What [`roq_score_pairs`] returns.
pub const OK: i32 = 0;
/// A plane smaller than the window or wider than [`MAX_WIDTH`], a null pointer or a pair
/// naming a missing plane.
pub const BAD_ARGUMENT: i32 = 1;

/// Scores `pairs` pairs: pair k is decoded picture `pair_decoded[k]` (−1: a black picture)
/// against source picture `pair_source[k]`; writes its SSIM to `ssim_out[k]` and its Σ(x − y)²
/// to `sse_out[k]`. Picture j of the decoded set starts at byte j·`decoded_stride` of
/// `decoded`, of the source set at j·`source_stride` of `source`; each is `width` × `height`
/// bytes row by row. Checks every index before scoring anything; returns [`OK`] or
/// [`BAD_ARGUMENT`] (then nothing is written).
///
/// # Safety
///
/// `decoded` must be readable for `decoded_count` pictures at `decoded_stride` bytes apart
/// (it may be null when `decoded_count` is 0), `source` for `source_count` at
/// `source_stride`; `pair_decoded` and `pair_source` readable and `ssim_out` and `sse_out`
/// writable for `pairs` values; none of the outputs may overlap an input.
#[no_mangle]
pub unsafe extern "C" fn roq_score_pairs(
    decoded: *const u8,
    decoded_count: usize,
    decoded_stride: usize,
    source: *const u8,
    source_count: usize,
    source_stride: usize,
    width: usize,
    height: usize,
    k1: f64,
    k2: f64,
    pair_decoded: *const i64,
    pair_source: *const i64,
    pairs: usize,
    ssim_out: *mut f64,
    sse_out: *mut u64,
) -> i32 {
    let Some(mut scorer) = Scorer::new(width, height, k1, k2) else {
        return BAD_ARGUMENT;
    };
    if pairs == 0 {
        return OK;
    }
    let plane = width * height;
    if source.is_null()
        || pair_decoded.is_null()
        || pair_source.is_null()
        || ssim_out.is_null()
        || sse_out.is_null()
        || (decoded_count > 0 && decoded.is_null())
        || (decoded_count > 1 && decoded_stride < plane)
        || (source_count > 1 && source_stride < plane)
    {
        return BAD_ARGUMENT;
    }
    // SAFETY: the caller guarantees each pointer is valid for the counts given (above).
    let (dec_idx, src_idx) = unsafe {
        (
            std::slice::from_raw_parts(pair_decoded, pairs),
            std::slice::from_raw_parts(pair_source, pairs),
        )
    };
    let named = |j: i64, count: usize, black_ok: bool| {
        (black_ok && j == -1) || (j >= 0 && (j as u64) < count as u64)
    };
    if !dec_idx.iter().all(|&j| named(j, decoded_count, true))
        || !src_idx.iter().all(|&s| named(s, source_count, false))
    {
        return BAD_ARGUMENT;
    }
    let black = vec![0u8; plane];
    // SAFETY: every index was checked against its count; the caller guarantees the pictures.
    let picture = |base: *const u8, stride: usize, j: i64| unsafe {
        std::slice::from_raw_parts(base.add(j as usize * stride), plane)
    };
    // SAFETY: the caller guarantees both outputs are writable for `pairs` values.
    let (ssims, sses) = unsafe {
        (
            std::slice::from_raw_parts_mut(ssim_out, pairs),
            std::slice::from_raw_parts_mut(sse_out, pairs),
        )
    };
    for k in 0..pairs {
        let x = match dec_idx[k] {
            -1 => &black[..],
            j => picture(decoded, decoded_stride, j),
        };
        let y = picture(source, source_stride, src_idx[k]);
        (ssims[k], sses[k]) = scorer.score(x, y);
    }
    OK
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: f64 = 0.01 * 255.0 * (0.01 * 255.0) * 64.0 * 64.0;
    const K2: f64 = 0.03 * 255.0 * (0.03 * 255.0) * 64.0 * 64.0;

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 56) as u8
            })
            .collect()
    }

    /// SSIM by its definition: each window's population means, variances and covariance.
    fn by_definition(x: &[u8], y: &[u8], w: usize, h: usize) -> f64 {
        let (c1, c2) = ((0.01f64 * 255.0).powi(2), (0.03f64 * 255.0).powi(2));
        let n = (WINDOW * WINDOW) as f64;
        let mut total = 0.0;
        let mut count = 0.0;
        for i in 0..=h - WINDOW {
            for j in 0..=w - WINDOW {
                let px = |p: &[u8], r: usize, c: usize| f64::from(p[(i + r) * w + j + c]);
                let (mut mx, mut my) = (0.0, 0.0);
                for r in 0..WINDOW {
                    for c in 0..WINDOW {
                        mx += px(x, r, c) / n;
                        my += px(y, r, c) / n;
                    }
                }
                let (mut vx, mut vy, mut cov) = (0.0, 0.0, 0.0);
                for r in 0..WINDOW {
                    for c in 0..WINDOW {
                        let (a, b) = (px(x, r, c) - mx, px(y, r, c) - my);
                        vx += a * a / n;
                        vy += b * b / n;
                        cov += a * b / n;
                    }
                }
                total += (2.0 * mx * my + c1) * (2.0 * cov + c2)
                    / ((mx * mx + my * my + c1) * (vx + vy + c2));
                count += 1.0;
            }
        }
        total / count
    }

    #[test]
    fn ssim_is_the_windowed_definition_and_sse_the_squared_error() {
        let (w, h) = (27, 20);
        let x = noise(w * h, 1);
        let y: Vec<u8> = x
            .iter()
            .zip(noise(w * h, 2))
            .map(|(&a, b)| a / 2 + b / 2)
            .collect();
        let mut s = Scorer::new(w, h, K1, K2).unwrap();
        let (ssim, sse) = s.score(&x, &y);
        assert!((ssim - by_definition(&x, &y, w, h)).abs() < 1e-12, "{ssim}");
        let expect: u64 = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| (i64::from(a) - i64::from(b)).pow(2) as u64)
            .sum();
        assert_eq!(sse, expect);
        let (same, zero) = s.score(&x, &x);
        assert!((same - 1.0).abs() < 1e-12 && zero == 0);
    }

    #[test]
    fn the_largest_sums_stay_exact() {
        // planes of 0 and 255 make the i32 terms largest (N·Sq up to 2²⁹)
        let (w, h) = (16, 16);
        let white = vec![255u8; w * h];
        let x: Vec<u8> = noise(w * h, 5)
            .iter()
            .map(|&v| if v > 127 { 255 } else { 0 })
            .collect();
        let mut s = Scorer::new(w, h, K1, K2).unwrap();
        for (a, b) in [(&white, &white), (&x, &white), (&x, &x)] {
            let (ssim, _) = s.score(a, b);
            assert!((ssim - by_definition(a, b, w, h)).abs() < 1e-12);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_gives_the_same_bits() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this CPU has no AVX2");
            return;
        }
        let (w, h) = (101, 37);
        let mut s = Scorer::new(w, h, K1, K2).unwrap();
        for seed in 0..20 {
            let x = noise(w * h, seed);
            let y: Vec<u8> = x
                .iter()
                .zip(noise(w * h, seed + 100))
                .map(|(&a, b)| a / 3 + b / 2)
                .collect();
            // SAFETY: the CPU has AVX2 (checked above)
            let wide = unsafe { s.score_avx2(&x, &y) };
            let any = s.score_any(&x, &y);
            assert_eq!((wide.0.to_bits(), wide.1), (any.0.to_bits(), any.1));
        }
    }

    #[test]
    fn pairwise_sum_follows_numpys_order() {
        // values whose float sum depends on the order: the blocks and the split must be
        // numpy's (the golden per-frame scores in tests/ check the whole against numpy itself)
        let a: Vec<f64> = (0..1000)
            .map(|i| 1.0 / f64::from(i + 1) + 1e10 * f64::from(i % 3))
            .collect();
        let seq: f64 = {
            let mut r = [0.0; 8];
            r.copy_from_slice(&a[..8]);
            for i in (8..120).step_by(8) {
                for j in 0..8 {
                    r[j] += a[i + j];
                }
            }
            ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        };
        assert_eq!(pairwise_sum(&a[..120]), seq);
        assert_eq!(
            pairwise_sum(&a[..5]),
            (((a[0] + a[1]) + a[2]) + a[3]) + a[4]
        );
        // 1000 → 496 + 504; 496 → 248 + 248 → 120 + 128 each; 504 → 248 + 256
        let halves = pairwise_sum(&a[..496]) + pairwise_sum(&a[496..]);
        assert_eq!(pairwise_sum(&a), halves);
        assert_eq!(
            pairwise_sum(&a[..496]),
            pairwise_sum(&a[..248]) + pairwise_sum(&a[248..496])
        );
    }

    #[test]
    fn bad_pairs_are_refused_before_anything_is_written() {
        let (w, h) = (8, 8);
        let src = noise(2 * w * h, 3);
        let dec = noise(w * h, 4);
        let mut ssim = [f64::NAN; 2];
        let mut sse = [7u64; 2];
        let call = |d: &[i64], s: &[i64], ssim: &mut [f64; 2], sse: &mut [u64; 2]| unsafe {
            roq_score_pairs(
                dec.as_ptr(),
                1,
                w * h,
                src.as_ptr(),
                2,
                w * h,
                w,
                h,
                K1,
                K2,
                d.as_ptr(),
                s.as_ptr(),
                2,
                ssim.as_mut_ptr(),
                sse.as_mut_ptr(),
            )
        };
        assert_eq!(call(&[0, 1], &[0, 1], &mut ssim, &mut sse), BAD_ARGUMENT);
        assert_eq!(call(&[0, -2], &[0, 1], &mut ssim, &mut sse), BAD_ARGUMENT);
        assert_eq!(call(&[0, -1], &[0, 2], &mut ssim, &mut sse), BAD_ARGUMENT);
        assert!(ssim.iter().all(|v| v.is_nan()) && sse == [7, 7]);
        assert_eq!(call(&[0, -1], &[1, 0], &mut ssim, &mut sse), OK);
        let mut s = Scorer::new(w, h, K1, K2).unwrap();
        assert_eq!((ssim[0], sse[0]), s.score(&dec, &src[w * h..]));
        assert_eq!((ssim[1], sse[1]), s.score(&[0u8; 64], &src[..w * h]));
    }
}
