//! Small, fast, deterministic random number generation (xoshiro256++ seeded with SplitMix64)
//! plus the stateless hash used to derive per-entity values (user dids, post CIDs, ...).

#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    // SplitMix64 finaliser: a good 64-bit bijective mixer.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a (domain, a, b) triple; different domains give independent streams.
#[inline(always)]
pub fn hash3(domain: u64, a: u64, b: u64) -> u64 {
    mix64(mix64(domain.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ a).wrapping_add(b.wrapping_mul(0xd6e8_feb8_6659_fd93)))
}

/// A SplitMix64 sequence: used to expand one hash into as many bits as needed.
pub struct SplitMix(pub u64);

impl SplitMix {
    #[inline(always)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
}

#[derive(Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64, stream: u64, sub: u64) -> Rng {
        let mut sm = SplitMix(hash3(0x5eed, seed, stream.wrapping_mul(1_000_003).wrapping_add(sub)));
        let mut s = [sm.next(), sm.next(), sm.next(), sm.next()];
        if s == [0, 0, 0, 0] {
            s[0] = 1;
        }
        Rng { s }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    #[inline(always)]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) (Lemire's multiply-shift; bias is negligible for our n).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    #[inline(always)]
    pub fn range(&mut self, lo: u64, hi_incl: u64) -> u64 {
        lo + self.below(hi_incl - lo + 1)
    }

    #[inline(always)]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// Exponential with mean 1.
    #[inline(always)]
    pub fn exp1(&mut self) -> f64 {
        -(1.0 - self.f64()).ln()
    }

    #[inline(always)]
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Piecewise-linear inverse CDF given as (quantile, value) knots, sampled through a lookup table.
pub struct InvCdf {
    table: Vec<f64>,
}

impl InvCdf {
    /// `knots` must start at quantile 0 and end at quantile 1, increasing. If `log` is set the
    /// interpolation happens on log(value) (values must be > 0).
    pub fn new(knots: &[(f64, f64)], log: bool) -> InvCdf {
        const N: usize = 4096;
        let mut table = Vec::with_capacity(N + 1);
        for i in 0..=N {
            let q = i as f64 / N as f64;
            let mut k = 0;
            while k + 2 < knots.len() && knots[k + 1].0 < q {
                k += 1;
            }
            let (q0, v0) = knots[k];
            let (q1, v1) = knots[k + 1];
            let t = if q1 > q0 { ((q - q0) / (q1 - q0)).clamp(0.0, 1.0) } else { 0.0 };
            let v = if log { (v0.ln() + t * (v1.ln() - v0.ln())).exp() } else { v0 + t * (v1 - v0) };
            table.push(v);
        }
        InvCdf { table }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        self.at(rng.f64())
    }

    #[inline(always)]
    pub fn at(&self, u: f64) -> f64 {
        let n = (self.table.len() - 1) as f64;
        let x = u * n;
        let i = x as usize;
        let t = x - i as f64;
        let a = self.table[i];
        let b = self.table[(i + 1).min(self.table.len() - 1)];
        a + t * (b - a)
    }
}

/// Walker alias table for a discrete distribution.
pub struct Alias {
    prob: Vec<f64>,
    alias: Vec<u32>,
}

impl Alias {
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut prob = vec![0.0; n];
        let mut alias = vec![0u32; n];
        let mut small: Vec<usize> = Vec::new();
        let mut large: Vec<usize> = Vec::new();
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i)
            } else {
                large.push(i)
            }
        }
        while let (Some(s), Some(l)) = (small.pop(), large.last().copied()) {
            prob[s] = scaled[s];
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in large.into_iter().chain(small) {
            prob[i] = 1.0;
            alias[i] = i as u32;
        }
        Alias { prob, alias }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let r = rng.next_u64();
        let i = (((r >> 32) * self.prob.len() as u64) >> 32) as usize;
        let u = (r & 0xffff_ffff) as f64 * (1.0 / 4_294_967_296.0);
        if u < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// Truncated continuous power law over ranks [0, n): density ∝ (x + q)^-s, sampled by inverse CDF.
/// With q > 0 this is a Zipf–Mandelbrot law: a flattened head, a power-law tail.
#[derive(Clone, Copy)]
pub struct PowerLaw {
    n: f64,
    a1s: f64,
    span: f64,
    inv: f64,
    q1: f64,
    log_case: bool,
    la: f64,
    lspan: f64,
}

impl PowerLaw {
    pub fn new(n: u64, s: f64, q: f64) -> PowerLaw {
        let a = q + 1.0;
        let b = q + 1.0 + n as f64;
        let log_case = (s - 1.0).abs() < 1e-9;
        let e = 1.0 - s;
        PowerLaw {
            n: n as f64,
            a1s: if log_case { 0.0 } else { a.powf(e) },
            span: if log_case { 0.0 } else { b.powf(e) - a.powf(e) },
            inv: if log_case { 0.0 } else { 1.0 / e },
            q1: a,
            log_case,
            la: a.ln(),
            lspan: b.ln() - a.ln(),
        }
    }

    #[inline(always)]
    pub fn at(&self, u: f64) -> u64 {
        let x = if self.log_case {
            (self.la + u * self.lspan).exp()
        } else {
            (self.a1s + u * self.span).powf(self.inv)
        };
        let r = (x - self.q1).max(0.0);
        (r.min(self.n - 1.0)) as u64
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        self.at(rng.f64())
    }
}
