//! YCSB's keys and key choosers, as `docbench.contracts.ycsb` defines them: the throughput
//! client's inserts and point operations must name the documents the Python load wrote.
//!
//! `key_of` and `fnv1a_64` are checked against tests/fixtures/vectors/ycsb_keys.json, which
//! tests/test_native_vectors.py checks against the Python functions.

use crate::rng::SplitMix;

/// Keys are `user` + 20 digits: an index's number modulo 10^20.
pub const KEY_MODULUS: u128 = 100_000_000_000_000_000_000;
/// Odd and not a multiple of 5: `index -> index * KEY_MULTIPLIER + offset` is a bijection
/// modulo 10^20.
pub const KEY_MULTIPLIER: u128 = 6_364_136_223_846_793_007 % KEY_MODULUS;
/// The seed's offset is `seed * KEY_SEED_MULTIPLIER` modulo 10^20.
const KEY_SEED_MULTIPLIER: u128 = 1_442_695_040_888_963_407;
/// Ten fields (`field1` ... `field10`) of 160 characters.
pub const FIELD_COUNT: usize = 10;
pub const FIELD_LENGTH: usize = 160;
pub const ZIPFIAN_THETA: f64 = 0.99;

/// The key of document `index` for `seed` (contracts/ycsb.py's `key_of`).
pub fn key_of(index: u64, seed: u64) -> String {
    let offset = (seed as u128 * KEY_SEED_MULTIPLIER) % KEY_MODULUS;
    let number = (index as u128 * KEY_MULTIPLIER + offset) % KEY_MODULUS;
    format!("user{number:020}")
}

/// YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of the value.
pub fn fnv1a_64(mut value: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= value & 0xFF;
        h = h.wrapping_mul(0x100_0000_01B3);
        value >>= 8;
    }
    h
}

/// What a point operation picks: uniform, or YCSB's scrambled zipfian (contracts/ycsb.py's
/// ZipfianChooser: Gray et al.'s generator over the `items` ranks, the rank hashed with
/// FNV-1a modulo `items`). The uniform numbers come from the caller's generator.
pub enum Keys {
    Uniform { items: u64 },
    Zipfian { items: u64, zetan: f64, eta: f64, alpha: f64 },
}

impl Keys {
    pub fn new(distribution: &str, items: u64) -> Result<Keys, String> {
        match distribution {
            "uniform" => Ok(Keys::Uniform { items }),
            "zipfian" => {
                let theta = ZIPFIAN_THETA;
                let zetan: f64 = (1..=items).map(|i| 1.0 / (i as f64).powf(theta)).sum();
                let zeta2 = 1.0 + 1.0 / 2f64.powf(theta);
                let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Ok(Keys::Zipfian { items, zetan, eta, alpha: 1.0 / (1.0 - theta) })
            }
            other => Err(format!("unknown distribution {other}")),
        }
    }

    /// The index (0 ..= items - 1) of the next document to operate on.
    pub fn next_index(&self, rng: &mut SplitMix) -> u64 {
        match *self {
            Keys::Uniform { items } => ((rng.unit() * items as f64) as u64).min(items - 1),
            Keys::Zipfian { items, .. } => fnv1a_64(self.rank_at(rng.unit())) % items,
        }
    }

    /// The zipfian rank (0 the most popular) drawn by the uniform number `u`; 0 for uniform keys.
    pub fn rank_at(&self, u: f64) -> u64 {
        match *self {
            Keys::Uniform { .. } => 0,
            Keys::Zipfian { items, zetan, eta, alpha } => {
                let uz = u * zetan;
                if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(ZIPFIAN_THETA) {
                    1
                } else {
                    ((items as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64).min(items - 1)
                }
            }
        }
    }
}

/// `length` characters of `[A-Za-z0-9-_]` (YCSB-style field values), six bits per character
/// from the top of each draw.
pub fn random_text(rng: &mut SplitMix, length: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    (0..length).map(|_| ALPHABET[(rng.next() >> 58) as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Vectors {
        key_of: Vec<KeyCase>,
        fnv1a_64: Vec<(u64, u64)>,
    }

    #[derive(Deserialize)]
    struct KeyCase {
        index: u64,
        seed: u64,
        key: String,
    }

    fn vectors() -> Vectors {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/vectors/ycsb_keys.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn keys_are_the_python_ones() {
        let vectors = vectors();
        assert!(vectors.key_of.len() >= 20);
        for case in &vectors.key_of {
            assert_eq!(key_of(case.index, case.seed), case.key, "index {} seed {}", case.index, case.seed);
        }
        assert!(vectors.fnv1a_64.len() >= 8);
        for &(value, hash) in &vectors.fnv1a_64 {
            assert_eq!(fnv1a_64(value), hash, "{value}");
        }
    }

    #[test]
    fn keys_are_distinct_and_shaped() {
        let keys: std::collections::HashSet<String> = (0..10_000).map(|i| key_of(i, 1)).collect();
        assert_eq!(keys.len(), 10_000);
        for key in keys.iter().take(100) {
            assert_eq!(key.len(), 24);
            assert!(key.starts_with("user") && key[4..].bytes().all(|c| c.is_ascii_digit()));
        }
        assert_ne!(key_of(3, 1), key_of(3, 2));
    }

    /// The sequences docbench-client has always drawn (printed before the crate was a library).
    #[test]
    fn choosers_are_pinned() {
        let draw = |distribution: &str, items: u64| {
            let keys = Keys::new(distribution, items).unwrap();
            let mut rng = SplitMix::seeded(17);
            (0..12).map(|_| keys.next_index(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw("uniform", 1000), [991, 321, 920, 352, 926, 993, 789, 254, 763, 50, 257, 28]);
        assert_eq!(draw("zipfian", 1000), [628, 360, 684, 587, 783, 498, 785, 814, 666, 405, 814, 405]);
        assert_eq!(draw("zipfian", 1), [0; 12]);
        assert_eq!(draw("uniform", 7), [6, 2, 6, 2, 6, 6, 5, 1, 5, 0, 1, 0]);
        assert!(Keys::new("pareto", 10).is_err());
    }

    #[test]
    fn zipfian_is_skewed_and_in_range() {
        let keys = Keys::new("zipfian", 10_000).unwrap();
        assert_eq!(keys.rank_at(0.0), 0);
        assert_eq!(keys.rank_at(0.999_999_999), 9_999);
        let mut rng = SplitMix::seeded(3);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            let index = keys.next_index(&mut rng);
            assert!(index < 10_000);
            *counts.entry(index).or_insert(0u32) += 1;
        }
        // The most popular rank (hashed to fnv1a_64(0) % n) takes ~10% of the draws.
        let hottest = counts[&(fnv1a_64(0) % 10_000)];
        assert!((8_000..12_000).contains(&hottest), "{hottest}");
        let uniform = Keys::new("uniform", 10).unwrap();
        let mut rng = SplitMix::seeded(3);
        assert!((0..10_000).all(|_| uniform.next_index(&mut rng) < 10));
    }

    #[test]
    fn random_text_is_pinned() {
        let mut rng = SplitMix::seeded(99);
        assert_eq!(random_text(&mut rng, 40), b"i6Jj_ekrQJxP9o8o-VDoWEDF3ct5ayt1RmnHTCWt");
        let mut rng = SplitMix::seeded(1);
        let text = random_text(&mut rng, FIELD_LENGTH * 100);
        assert!(text.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_'));
    }
}
