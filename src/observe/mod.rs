//! Watching the system: pure parsers of kernel files (each tested on fixture
//! text), thin readers that reuse their buffers, the live counters workers
//! publish, the pre-run page-cache drop (cache_drop), the environment captured once per
//! run, and the `Sampler` thread that records it all into `Observations`.

pub mod cache_drop;
pub mod cgroup;
pub mod cpu;
pub mod cpufreq;
pub mod diskstats;
pub mod environment;
pub mod ledger;
pub mod live;
pub mod meminfo;
pub mod openers;
pub mod pagecache;
pub mod pressure;
pub mod sampler;
pub mod stack;
pub mod task_io;
pub mod tunables;
pub mod vmstat;
pub mod wchan;

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
