//! Synthetic multilingual text: posts, names, handles, URLs.

use crate::rng::{Alias, InvCdf, PowerLaw, Rng};
use crate::words;

pub struct Lang {
    words: Vec<&'static str>,
    /// Words separated by spaces (false for Japanese and Chinese).
    spaced: bool,
    /// Latin script: first letter of a sentence is capitalised.
    latin: bool,
    /// Roughly how many bytes a grapheme takes on average (scales the sampled length).
    byte_scale: f64,
    /// Bytes per character of the script (for posts that use the full 300 graphemes).
    char_bytes: f64,
    pl: PowerLaw,
}

pub struct TextGen {
    pub langs: Vec<Lang>,
    /// (lang code written in `langs`, index of the vocabulary used for the text)
    pub codes: Vec<(&'static str, usize)>,
    code_alias: Alias,
    pub emoji: Vec<&'static str>,
    emoji_pl: PowerLaw,
    pub tags: Vec<&'static str>,
    tags_pl: PowerLaw,
    pub first: Vec<&'static str>,
    pub last: Vec<&'static str>,
    en_caps: Vec<&'static str>,
    pub domains: Vec<&'static str>,
    domains_pl: PowerLaw,
    sections: Vec<&'static str>,
    tlds: Vec<&'static str>,
    /// Post text length in "latin bytes".
    pub post_len: InvCdf,
}

fn split(s: &'static str) -> Vec<&'static str> {
    s.split_whitespace().collect()
}

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

impl TextGen {
    pub fn new() -> TextGen {
        let mk = |code: &str, list: &'static str, spaced, latin, byte_scale: f64| {
            let w = split(list);
            let n = w.len() as u64;
            let char_bytes = match code {
                "ja" | "zh" => 3.0,
                "ko" => 2.6,
                "ru" | "uk" | "ar" => 1.85,
                _ => 1.05,
            };
            Lang { words: w, spaced, latin, byte_scale, char_bytes, pl: PowerLaw::new(n, 1.05, 2.0) }
        };
        let langs = vec![
            mk("en", words::EN, true, true, 1.0),
            mk("ja", words::JA, false, false, 1.45),
            mk("pt", words::PT, true, true, 1.05),
            mk("de", words::DE, true, true, 1.1),
            mk("es", words::ES, true, true, 1.05),
            mk("ko", words::KO, true, false, 1.5),
            mk("fr", words::FR, true, true, 1.05),
            mk("it", words::IT, true, true, 1.0),
            mk("nl", words::NL, true, true, 1.0),
            mk("ru", words::RU, true, false, 1.6),
            mk("zh", words::ZH, false, false, 1.3),
            mk("tr", words::TR, true, true, 1.1),
            mk("pl", words::PL, true, true, 1.1),
            mk("uk", words::UK, true, false, 1.6),
            mk("id", words::ID, true, true, 1.0),
            mk("ar", words::AR, true, false, 1.6),
            mk("sv", words::SV, true, true, 1.0),
        ];
        // Share of posts (among those that declare langs) per declared language.
        let codes: Vec<(&'static str, usize, f64)> = vec![
            ("en", 0, 0.705),
            ("ja", 1, 0.075),
            ("pt", 2, 0.068),
            ("de", 3, 0.03),
            ("es", 4, 0.03),
            ("ko", 5, 0.012),
            ("fr", 6, 0.016),
            ("it", 7, 0.008),
            ("nl", 8, 0.008),
            ("ru", 9, 0.005),
            ("zh", 10, 0.005),
            ("tr", 11, 0.005),
            ("pl", 12, 0.005),
            ("uk", 13, 0.004),
            ("id", 14, 0.004),
            ("ar", 15, 0.003),
            ("sv", 16, 0.003),
            ("nb", 16, 0.002),
            ("da", 16, 0.002),
            ("fi", 16, 0.002),
            ("ca", 4, 0.002),
            ("gl", 2, 0.001),
            ("ro", 7, 0.002),
            ("vi", 14, 0.002),
            ("tl", 14, 0.001),
            ("th", 10, 0.001),
            ("fa", 15, 0.001),
            ("he", 15, 0.001),
            ("cs", 12, 0.001),
            ("hu", 11, 0.001),
            ("el", 9, 0.001),
            ("eo", 6, 0.0005),
            ("la", 7, 0.0005),
        ];
        let code_alias = Alias::new(&codes.iter().map(|c| c.2).collect::<Vec<_>>());
        let emoji = split(words::EMOJI);
        let tags = split(words::TAGS);
        let domains = split(words::DOMAINS);
        TextGen {
            emoji_pl: PowerLaw::new(emoji.len() as u64, 1.0, 3.0),
            tags_pl: PowerLaw::new(tags.len() as u64, 0.9, 3.0),
            domains_pl: PowerLaw::new(domains.len() as u64, 0.9, 2.0),
            langs,
            codes: codes.iter().map(|c| (c.0, c.1)).collect(),
            code_alias,
            emoji,
            tags,
            first: split(words::FIRST_NAMES),
            last: split(words::LAST_NAMES),
            en_caps: split(words::EN_CAPS),
            domains,
            sections: split(words::SECTIONS),
            tlds: split(words::TLDS),
            // Byte length of post text (for Latin-script text): median ~54, long tail.
            post_len: InvCdf::new(
                &[
                    (0.0, 1.0),
                    (0.06, 4.0),
                    (0.12, 11.0),
                    (0.25, 24.0),
                    (0.5, 45.0),
                    (0.75, 108.0),
                    (0.9, 200.0),
                    (0.95, 245.0),
                    (0.985, 290.0),
                    (0.997, 300.0),
                    (1.0, 310.0),
                ],
                true,
            ),
        }
    }

    /// A declared language: (code, vocabulary index).
    #[inline]
    pub fn pick_code(&self, rng: &mut Rng) -> (&'static str, usize) {
        self.codes[self.code_alias.sample(rng)]
    }

    #[inline]
    pub fn emoji(&self, rng: &mut Rng) -> &'static str {
        self.emoji[self.emoji_pl.sample(rng) as usize]
    }

    #[inline]
    pub fn tag(&self, rng: &mut Rng) -> &'static str {
        self.tags[self.tags_pl.sample(rng) as usize]
    }

    #[inline]
    pub fn word(&self, rng: &mut Rng, lang: usize) -> &'static str {
        let l = &self.langs[lang];
        l.words[l.pl.sample(rng) as usize]
    }

    /// Target bytes for a text of `latin_bytes` sampled length: scaled by the script's
    /// average bytes per grapheme, and for the longest posts (near the 300-grapheme limit) by
    /// its bytes per character, so CJK posts reach ~900 bytes like real ones.
    pub fn scaled_len(&self, lang: usize, latin_bytes: f64) -> usize {
        let l = &self.langs[lang];
        let scale = if latin_bytes >= 285.0 { l.char_bytes.max(l.byte_scale) } else { l.byte_scale };
        (latin_bytes * scale) as usize
    }

    /// Append roughly `target` bytes of text in vocabulary `lang` to `out` (raw UTF-8).
    pub fn text(&self, rng: &mut Rng, lang: usize, target: usize, out: &mut Vec<u8>) {
        let start = out.len();
        let l = &self.langs[lang];
        // Per-text typography: curly apostrophes (’) as phone keyboards type them.
        let curly = rng.chance(0.3);
        let mut in_sentence = 0usize;
        let mut sentence_len = rng.range(3, 16) as usize;
        while out.len() - start < target {
            let at_start = in_sentence == 0;
            if l.spaced && out.len() > start {
                let last = out[out.len() - 1];
                if last != b'\n' && last != b' ' {
                    out.push(b' ');
                }
            }
            let r = rng.f64();
            if lang == 0 && r < 0.04 {
                out.extend_from_slice(rng.pick(&self.en_caps).as_bytes());
            } else if lang == 0 && r > 0.78 {
                let p = rng.pick(words::EN_PHRASES).as_bytes();
                let pos = out.len();
                if curly && p.contains(&b'\'') {
                    for &c in p {
                        if c == b'\'' {
                            out.extend_from_slice("’".as_bytes());
                        } else {
                            out.push(c);
                        }
                    }
                } else {
                    out.extend_from_slice(p);
                }
                if at_start && out[pos].is_ascii_lowercase() {
                    out[pos] = out[pos].to_ascii_uppercase();
                }
            } else if r < 0.055 {
                let mut b = itoa::Buffer::new();
                let n = if rng.chance(0.7) { rng.range(1, 100) } else { rng.range(100, 2100) };
                out.extend_from_slice(b.format(n).as_bytes());
            } else if !l.latin && r < 0.07 {
                // Latin-script loanwords inside non-Latin text.
                out.extend_from_slice(self.word(rng, 0).as_bytes());
            } else {
                let w = self.word(rng, lang).as_bytes();
                let pos = out.len();
                if curly && w.contains(&b'\'') {
                    for &c in w {
                        if c == b'\'' {
                            out.extend_from_slice("’".as_bytes());
                        } else {
                            out.push(c);
                        }
                    }
                } else {
                    out.extend_from_slice(w);
                }
                if at_start && l.latin && out[pos].is_ascii_lowercase() && rng.chance(0.8) {
                    out[pos] = out[pos].to_ascii_uppercase();
                }
            }
            in_sentence += 1;
            if in_sentence >= sentence_len {
                in_sentence = 0;
                sentence_len = rng.range(3, 16) as usize;
                let p = rng.f64();
                if l.spaced {
                    out.extend_from_slice(match p {
                        x if x < 0.42 => b".".as_slice(),
                        x if x < 0.52 => b"!",
                        x if x < 0.59 => b"?",
                        x if x < 0.62 => b"...",
                        x if x < 0.64 => "…".as_bytes(),
                        x if x < 0.66 => " —".as_bytes(),
                        x if x < 0.7 => b",",
                        _ => b"",
                    });
                } else {
                    out.extend_from_slice(match p {
                        x if x < 0.4 => "。".as_bytes(),
                        x if x < 0.55 => "！".as_bytes(),
                        x if x < 0.62 => "？".as_bytes(),
                        x if x < 0.7 => "、".as_bytes(),
                        x if x < 0.75 => "…".as_bytes(),
                        _ => b"",
                    });
                }
                if rng.chance(0.12) {
                    if l.spaced {
                        out.push(b' ');
                    }
                    let e = self.emoji(rng);
                    let reps = if rng.chance(0.2) { rng.range(2, 3) } else { 1 };
                    for _ in 0..reps {
                        out.extend_from_slice(e.as_bytes());
                    }
                }
                if out.len() - start < target {
                    let q = rng.f64();
                    if q < 0.07 {
                        out.extend_from_slice(b"\n\n");
                        continue;
                    } else if q < 0.12 {
                        out.push(b'\n');
                        continue;
                    }
                }
            }
        }
        // Trim trailing spaces.
        while out.len() > start && out[out.len() - 1] == b' ' {
            out.pop();
        }
        // Many short posts end with an emoji.
        if out.len() > start && rng.chance(0.11) {
            if l.spaced {
                out.push(b' ');
            }
            out.extend_from_slice(self.emoji(rng).as_bytes());
        }
    }

    /// Lower-case ASCII handle stem from a hash.
    pub fn handle_stem(&self, h: u64, out: &mut Vec<u8>) {
        let f = self.first[(h % self.first.len() as u64) as usize];
        push_ascii_lower(out, f);
        match (h >> 20) % 4 {
            0 => {
                let l = self.last[((h >> 24) % self.last.len() as u64) as usize];
                push_ascii_lower(out, l);
            }
            1 => {
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format((h >> 30) % 10_000).as_bytes());
            }
            2 => {
                let l = self.last[((h >> 24) % self.last.len() as u64) as usize];
                push_ascii_lower(out, l);
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format((h >> 40) % 100).as_bytes());
            }
            _ => {
                let w = self.langs[0].words[((h >> 24) % 300) as usize];
                push_ascii_lower(out, w);
                let l = self.last[((h >> 36) % self.last.len() as u64) as usize];
                push_ascii_lower(out, l);
            }
        }
    }

    /// A handle for a user: mostly `<stem>.bsky.social`, sometimes a custom domain.
    pub fn handle(&self, h: u64, out: &mut Vec<u8>) {
        self.handle_stem(h, out);
        if (h >> 50) % 100 < 88 {
            out.extend_from_slice(b".bsky.social");
        } else {
            out.push(b'.');
            out.extend_from_slice(self.tlds[((h >> 44) % self.tlds.len() as u64) as usize].as_bytes());
        }
    }

    pub fn display_name(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        out.extend_from_slice(rng.pick(&self.first).as_bytes());
        let r = rng.f64();
        if r < 0.5 {
            out.push(b' ');
            out.extend_from_slice(rng.pick(&self.last).as_bytes());
        } else if r < 0.6 {
            out.push(b' ');
            out.extend_from_slice(self.emoji(rng).as_bytes());
        } else if r < 0.7 {
            out.extend_from_slice(" 🦋".as_bytes());
        }
    }

    pub fn url_token(&self, rng: &mut Rng, n: usize, out: &mut Vec<u8>) {
        for _ in 0..n {
            out.push(URL_SAFE[rng.below(64) as usize]);
        }
    }

    /// A URL; returns the byte offset in `out` where the host starts (after the scheme).
    pub fn url(&self, rng: &mut Rng, out: &mut Vec<u8>) -> usize {
        out.extend_from_slice(b"https://");
        let host_at = out.len();
        let d = self.domains[self.domains_pl.sample(rng) as usize];
        match d {
            "www.youtube.com" => {
                out.extend_from_slice(b"www.youtube.com/watch?v=");
                self.url_token(rng, 11, out);
            }
            "youtu.be" => {
                out.extend_from_slice(b"youtu.be/");
                self.url_token(rng, 11, out);
                if rng.chance(0.6) {
                    out.extend_from_slice(b"?si=");
                    self.url_token(rng, 16, out);
                }
            }
            "open.spotify.com" => {
                out.extend_from_slice(b"open.spotify.com/");
                out.extend_from_slice(if rng.chance(0.7) { b"track/".as_slice() } else { b"episode/" });
                self.url_token(rng, 22, out);
                out.extend_from_slice(b"?si=");
                self.url_token(rng, 16, out);
            }
            "x.com" | "twitter.com" => {
                out.extend_from_slice(d.as_bytes());
                out.push(b'/');
                self.handle_stem(rng.next_u64(), out);
                out.extend_from_slice(b"/status/18");
                let mut b = itoa::Buffer::new();
                out.extend_from_slice(b.format(rng.range(10_000_000_000_000_000, 99_999_999_999_999_999)).as_bytes());
            }
            _ => {
                out.extend_from_slice(d.as_bytes());
                out.push(b'/');
                out.extend_from_slice(rng.pick(&self.sections).as_bytes());
                out.push(b'/');
                if rng.chance(0.5) {
                    out.extend_from_slice(b"2024/11/");
                    let mut b = itoa::Buffer::new();
                    out.extend_from_slice(b.format(rng.range(10, 21)).as_bytes());
                    out.push(b'/');
                }
                let n = rng.range(3, 9);
                for i in 0..n {
                    if i > 0 {
                        out.push(b'-');
                    }
                    push_ascii_lower(out, self.word(rng, 0));
                }
                let r = rng.f64();
                if r < 0.3 {
                    out.extend_from_slice(b".html");
                } else if r < 0.5 {
                    out.push(b'-');
                    let mut b = itoa::Buffer::new();
                    out.extend_from_slice(b.format(rng.range(1_000_000, 99_999_999)).as_bytes());
                } else if r < 0.6 {
                    out.extend_from_slice(b"?utm_source=bluesky&utm_medium=social");
                }
            }
        }
        host_at
    }

    /// A GIF URL as Bluesky's GIF picker produces (Tenor).
    pub fn gif_url(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        out.extend_from_slice(b"https://media.tenor.com/");
        self.url_token(rng, 16, out);
        out.push(b'/');
        let n = rng.range(2, 4);
        for i in 0..n {
            if i > 0 {
                out.push(b'-');
            }
            push_ascii_lower(out, self.word(rng, 0));
        }
        out.extend_from_slice(b".gif?hh=");
        let mut b = itoa::Buffer::new();
        out.extend_from_slice(b.format(rng.range(150, 498)).as_bytes());
        out.extend_from_slice(b"&ww=");
        out.extend_from_slice(b.format(rng.range(200, 498)).as_bytes());
    }
}

impl Default for TextGen {
    fn default() -> Self {
        Self::new()
    }
}

pub fn push_ascii_lower(out: &mut Vec<u8>, s: &str) {
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        }
    }
}
