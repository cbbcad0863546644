//! Watching the system: pure parsers of kernel files (each tested on fixture
//! text), thin readers that reuse their buffers, the live counters workers
//! publish, the pre-run page-cache drop (cache_drop), the environment captured once per
//! run, and the `Sampler` thread that records it all into `Observations`.

pub(crate) mod cache_drop;
pub(crate) mod cgroup;
pub(crate) mod cpu;
pub(crate) mod cpufreq;
pub(crate) mod diskstats;
pub(crate) mod environment;
pub(crate) mod ledger;
pub(crate) mod live;
pub(crate) mod meminfo;
pub(crate) mod openers;
pub(crate) mod pagecache;
pub(crate) mod pressure;
pub(crate) mod rollup;
pub(crate) mod sampler;
pub(crate) mod stack;
pub(crate) mod task_io;
pub(crate) mod tunables;
pub(crate) mod vmstat;
pub(crate) mod wchan;

use std::io::Read;
use std::path::Path;

/// Read a small kernel file into `buf` (cleared first), reusing its allocation.
/// False when the file cannot be read (absent, no permission, thread gone).
pub(crate) fn read_into(path: impl AsRef<Path>, buf: &mut String) -> bool {
    buf.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(buf))
        .is_ok()
}
