//! A seeded generator of small, size-bound fio job sections.
//!
//! One seed gives one case: one to three sections (the first starts a new
//! group), each with a pattern, block sizes, a region and limits, an engine and
//! a job count. Every case moves little data (null engine, or files of at most
//! a few hundred KiB), so hundreds of them run in seconds.

use std::fmt::Write as _;

/// splitmix64: a tiny, stable generator (the case of a seed never changes
/// with a dependency's version).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed ^ 0x005e_ed0f_d1ff)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with `percent` per cent.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

const KIB: u64 = 1024;

/// What sets two sections apart in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Separator {
    Stonewall,
    NewGroup,
    /// Same group, running beside the previous section.
    None,
}

#[derive(Debug, Clone)]
pub(super) struct Section {
    pub name: String,
    /// Options in job-file order.
    pub options: Vec<(String, String)>,
    pub separator: Separator,
}

impl Section {
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn set(&mut self, key: &str, value: impl ToString) {
        self.options.push((key.to_string(), value.to_string()));
    }

    pub(super) fn numjobs(&self) -> u64 {
        self.get("numjobs").map_or(1, |n| n.parse().unwrap())
    }

    /// The block sizes the section names (bs, the ends of bsrange, or bssplit's).
    fn block_sizes(&self) -> Vec<u64> {
        if let Some(range) = self.get("bsrange") {
            return range.split('-').map(parse_size).collect();
        }
        if let Some(split) = self.get("bssplit") {
            return split
                .split(':')
                .map(|part| parse_size(part.split('/').next().unwrap()))
                .collect();
        }
        vec![parse_size(self.get("bs").unwrap())]
    }

    /// The largest block size of the section (fio's `td_max_bs`).
    pub(super) fn max_bs(&self) -> u64 {
        self.block_sizes().into_iter().max().unwrap()
    }

    /// The smallest block size of the section (fio's `td_min_bs`).
    pub(super) fn min_bs(&self) -> u64 {
        self.block_sizes().into_iter().min().unwrap()
    }

    /// Block sizes are drawn at random (bsrange, bssplit).
    pub(super) fn random_sizes(&self) -> bool {
        self.has("bsrange") || self.has("bssplit")
    }

    /// Offsets are drawn at random.
    pub(super) fn random(&self) -> bool {
        self.get("rw").unwrap().starts_with("rand")
    }

    /// Where the last clone starts: offset + (numjobs - 1) × offset_increment.
    fn last_start(&self) -> u64 {
        let size = |key| self.get(key).map_or(0, parse_size);
        size("offset") + (self.numjobs() - 1) * size("offset_increment")
    }

    /// fio refuses the job: a clone starts past the end of its `filesize=`
    /// files, or what lies past its start holds less than the smallest block.
    pub(super) fn refused_start(&self) -> bool {
        let Some(filesize) = self.get("filesize").map(parse_size) else {
            return false;
        };
        let start = self.last_start();
        let files = self.get("nrfiles").map_or(1, |n| n.parse().unwrap());
        start > filesize || files * (filesize - start) < self.min_bs()
    }

    /// Reads and writes are mixed by a random draw.
    pub(super) fn mixed(&self) -> bool {
        matches!(
            self.get("rw").unwrap().split(':').next().unwrap(),
            "rw" | "readwrite" | "randrw"
        )
    }
}

/// Sizes as the generator writes them: a number with an optional k or m.
pub(super) fn parse_size(text: &str) -> u64 {
    let (digits, unit) = match text.strip_suffix('k') {
        Some(d) => (d, KIB),
        None => match text.strip_suffix('m') {
            Some(d) => (d, KIB * KIB),
            None => (text, 1),
        },
    };
    digits.parse::<u64>().unwrap() * unit
}

fn size_text(bytes: u64) -> String {
    if bytes.is_multiple_of(KIB * KIB) {
        format!("{}m", bytes / (KIB * KIB))
    } else if bytes.is_multiple_of(KIB) {
        format!("{}k", bytes / KIB)
    } else {
        bytes.to_string()
    }
}

#[derive(Debug, Clone)]
pub(super) struct Case {
    pub seed: u64,
    pub sections: Vec<Section>,
    /// Files the case expects to exist before it runs: (name, bytes).
    pub files: Vec<(String, u64)>,
}

const ENGINES: [&str; 5] = ["null", "psync", "sync", "libaio", "io_uring"];
const PATTERNS: [&str; 6] = ["read", "write", "randread", "randwrite", "rw", "randrw"];
const BLOCKS: [u64; 9] = [
    512,
    KIB,
    2 * KIB,
    4 * KIB,
    4 * KIB,
    8 * KIB,
    10 * KIB,
    12 * KIB,
    16 * KIB,
];

impl Case {
    pub(super) fn generate(seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let count = match rng.below(10) {
            0..=6 => 1,
            7 | 8 => 2,
            _ => 3,
        };
        let mut case = Case {
            seed,
            sections: Vec::new(),
            files: Vec::new(),
        };
        let group_reporting = rng.chance(40);
        for index in 0..count {
            let separator = match (index, rng.below(3)) {
                (0, _) | (_, 0) => Separator::Stonewall,
                (_, 1) => Separator::NewGroup,
                _ => Separator::None,
            };
            let section = case.section(&mut rng, index, separator, group_reporting);
            case.sections.push(section);
        }
        case
    }

    fn section(
        &mut self,
        rng: &mut Rng,
        index: usize,
        separator: Separator,
        group_reporting: bool,
    ) -> Section {
        let mut s = Section {
            name: format!("c{}s{index}", self.seed),
            options: Vec::new(),
            separator,
        };
        let engine = if rng.chance(55) {
            "null"
        } else {
            rng.pick(&ENGINES[1..])
        };
        let on_files = engine != "null";
        s.set("ioengine", engine);
        if matches!(engine, "libaio" | "io_uring") {
            s.set("iodepth", rng.pick(&[1, 2, 4, 8]));
        }
        let pattern = rng.pick(&PATTERNS);
        let random = pattern.starts_with("rand");
        let bs = rng.pick(&BLOCKS);
        // open: `:N` on random and mixed patterns (see docs/fio-differences.md)
        let rw = if matches!(pattern, "read" | "write") && rng.chance(12) {
            format!("{pattern}:{}", size_text(bs * rng.pick(&[1, 2])))
        } else {
            pattern.to_string()
        };
        s.set("rw", rw);
        if s.mixed() && rng.chance(40) {
            s.set("rwmixread", rng.pick(&[10, 30, 70, 90]));
        }
        // open: holes with bsrange/bssplit (see docs/fio-differences.md)
        let holes = s.get("rw").unwrap().contains(':');
        match rng.below(100) {
            n if n < 75 || holes => s.set("bs", size_text(bs)),
            n if n < 88 => s.set(
                "bsrange",
                format!("{}-{}", size_text(bs), size_text(bs * 4)),
            ),
            _ => s.set(
                "bssplit",
                format!("{}/50:{}/50", size_text(bs), size_text(bs * 2)),
            ),
        }
        if random && rng.chance(10) {
            s.set("blockalign", size_text(bs));
        }
        // the region: about 8 to 200 blocks of the smallest size
        let blocks = rng.pick(&[8, 13, 32, 50, 64, 100, 200]);
        let mut size = bs * blocks + rng.pick(&[0, 0, 0, 512, bs / 2, 3 * KIB]);
        // open: holes with size=N% (see docs/fio-differences.md)
        let percent = on_files && !holes && rng.chance(8);
        if percent {
            let name = format!("pre{}s{index}", self.seed);
            let file_len = size * 2;
            self.files.push((name.clone(), file_len));
            s.set("filename", name);
            s.set("size", format!("{}%", rng.pick(&[25, 50, 75])));
            size = file_len;
        } else {
            s.set("size", size_text(size));
        }
        if on_files && !percent && rng.chance(15) {
            s.set("nrfiles", rng.pick(&[2, 3]));
            if rng.chance(50) {
                s.set("filesize", size_text(size / 2));
            }
        }
        // open: holes beside an offset (see docs/fio-differences.md)
        if !s.get("rw").unwrap().contains(':') && rng.chance(15) {
            s.set("offset", size_text(bs * rng.pick(&[1, 3, 8])));
        }
        if rng.chance(30) {
            s.set("numjobs", rng.pick(&[2, 3]));
            // open: offset_increment beside holes
            if !s.get("rw").unwrap().contains(':') && rng.chance(40) {
                s.set("offset_increment", size_text(bs * rng.pick(&[4, 16])));
            }
        }
        match rng.below(100) {
            0..=11 => s.set(
                "io_size",
                size_text(size * rng.pick(&[1, 2, 3]) / 2 + bs / 2),
            ),
            12..=21 => s.set("number_ios", rng.pick(&[1, 5, 17, 1000])),
            22..=35 => s.set("loops", rng.pick(&[2, 3])),
            _ => {}
        }
        // open: verify beside loops, io_size, offset or a `:N` modifier (see
        // docs/fio-differences.md)
        let plain = !s.get("rw").unwrap().contains(':')
            && !["loops", "io_size", "offset", "number_ios"]
                .iter()
                .any(|k| s.has(k));
        if on_files
            && plain
            && matches!(pattern, "write" | "randwrite")
            && !s.has("nrfiles")
            && rng.chance(25)
        {
            s.set("verify", "crc32c");
        }
        if group_reporting {
            s.set("group_reporting", 1);
        }
        s
    }

    /// fio refuses a section's job: `refused_start`, or with `size=N%` of an
    /// existing file less than the smallest block past the last clone's start.
    pub(super) fn refuses(&self, s: &Section) -> bool {
        let percent = s.get("size").and_then(|size| size.strip_suffix('%'));
        let file = s
            .get("filename")
            .and_then(|name| self.files.iter().find(|(file, _)| file == name));
        let past_percent = match (percent, file) {
            (Some(percent), Some(&(_, len))) => {
                let percent: u64 = percent.parse().unwrap();
                (len * percent / 100).min(len.saturating_sub(s.last_start())) < s.min_bs()
            }
            _ => false,
        };
        s.refused_start() || past_percent
    }

    /// With group_reporting, two sections share one group (and one entry).
    pub(super) fn merges_sections(&self) -> bool {
        self.sections
            .iter()
            .skip(1)
            .any(|s| s.separator == Separator::None && s.has("group_reporting"))
    }

    /// The case's sections as job-file text; files are relative to the
    /// directory the tools run in.
    pub(super) fn job_text(&self) -> String {
        let mut text = String::new();
        for s in &self.sections {
            writeln!(text, "[{}]", s.name).unwrap();
            match s.separator {
                Separator::Stonewall => text.push_str("stonewall\n"),
                Separator::NewGroup => text.push_str("new_group\n"),
                _ => {}
            }
            for (key, value) in &s.options {
                writeln!(text, "{key}={value}").unwrap();
            }
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_always_gives_the_same_case() {
        assert_eq!(Case::generate(7).job_text(), Case::generate(7).job_text());
        assert_ne!(Case::generate(7).job_text(), Case::generate(8).job_text());
    }
}
