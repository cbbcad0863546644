//! Unit tests of `report::fio::json`.

use super::*;
use crate::model::{
    CpuReport, DepthReport, GroupDirSummary, GroupReport, LatBuckets, SampleSummary, SyncReport,
    SCHEMA_VERSION,
};
use serde_json::Value;
use std::collections::BTreeMap;

// Key sets of fio 3.33's JSON output (`--output-format=json`, a randrw
// libaio job with fsync), by object.
const TOP_KEYS: &[&str] = &[
    "fio version",
    "timestamp",
    "timestamp_ms",
    "time",
    "jobs",
    "disk_util",
];
const JOB_KEYS: &[&str] = &[
    "jobname",
    "groupid",
    "error",
    "eta",
    "elapsed",
    "job options",
    "read",
    "write",
    "trim",
    "sync",
    "job_runtime",
    "usr_cpu",
    "sys_cpu",
    "ctx",
    "majf",
    "minf",
    "iodepth_level",
    "iodepth_submit",
    "iodepth_complete",
    "latency_ns",
    "latency_us",
    "latency_ms",
    "latency_depth",
    "latency_target",
    "latency_percentile",
    "latency_window",
];
const DIR_KEYS: &[&str] = &[
    "io_bytes",
    "io_kbytes",
    "bw_bytes",
    "bw",
    "iops",
    "runtime",
    "total_ios",
    "short_ios",
    "drop_ios",
    "slat_ns",
    "clat_ns",
    "lat_ns",
    "bw_min",
    "bw_max",
    "bw_agg",
    "bw_mean",
    "bw_dev",
    "bw_samples",
    "iops_min",
    "iops_max",
    "iops_mean",
    "iops_stddev",
    "iops_samples",
];
const LAT_KEYS: &[&str] = &["min", "max", "mean", "stddev", "N"];
const SYNC_KEYS: &[&str] = &["total_ios", "lat_ns"];
const DISK_KEYS: &[&str] = &[
    "name",
    "read_ios",
    "write_ios",
    "read_merges",
    "write_merges",
    "read_ticks",
    "write_ticks",
    "in_queue",
    "util",
];
const PERCENTILE_KEYS: &[&str] = &[
    "1.000000",
    "5.000000",
    "10.000000",
    "20.000000",
    "30.000000",
    "40.000000",
    "50.000000",
    "60.000000",
    "70.000000",
    "80.000000",
    "90.000000",
    "95.000000",
    "99.000000",
    "99.500000",
    "99.900000",
    "99.950000",
    "99.990000",
];

/// Compares key sets; `Value` keeps keys sorted, so order is checked on the text.
fn assert_keys(v: &Value, expected: &[&str]) {
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    let actual: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(actual, expected);
}

fn summary(samples: u64, percentiles: Vec<(f64, u64)>) -> LatSummary {
    LatSummary {
        min_ns: 40_000,
        max_ns: 400_000,
        mean_ns: 69_685.2,
        stddev_ns: 20_310.4,
        samples,
        percentiles,
        bins: Default::default(),
    }
}

fn report(mean_ns: f64) -> RunReport {
    let percentiles: Vec<(f64, u64)> = crate::job::spec::DEFAULT_PERCENTILES
        .iter()
        .map(|&p| (p, 66_048))
        .collect();
    let bins = BTreeMap::from([(1128, 1000), (66_048, 992)]);
    let read = DirReport {
        io_bytes: 8_159_232,
        total_ios: 1992,
        short_ios: 0,
        runtime_ns: 157_400_000,
        bw_bytes_per_sec: 51_969_630.0,
        iops: 12_687.9,
        slat: None,
        clat: Some(LatSummary {
            bins: bins.clone(),
            ..summary(1992, percentiles.clone())
        }),
        lat: Some(LatSummary {
            mean_ns,
            ..summary(1992, Vec::new())
        }),
        bw_samples: SampleSummary {
            min: 105_455_616.0,
            max: 121_053_184.0,
            mean: 114_660_693.0,
            stddev: 8_170_313.0,
            samples: 3,
        },
        iops_samples: SampleSummary {
            min: 25_746.0,
            max: 29_554.0,
            mean: 27_993.3,
            stddev: 1994.7,
            samples: 3,
        },
        prios: Vec::new(),
    };
    let job = JobReport {
        description: None,
        tolerated_errors: None,
        name: "t\u{1}\"x".into(),
        groupid: 0,
        workers: 1,
        pid: None,
        error: None,
        errno: 0,
        options: vec![
            ("rw".into(), "randrw".into()),
            ("iodepth".into(), "8".into()),
        ],
        dirs: [read, DirReport::default(), DirReport::default()],
        mixed: None,
        sync: SyncReport {
            total_ios: 3,
            lat: Some(LatSummary {
                bins: BTreeMap::from([(192_512, 3)]),
                ..summary(3, percentiles)
            }),
        },
        cpu: CpuReport {
            usr_pct: 5.35,
            sys_pct: 28.75,
            ctx: 23157,
            minf: 15,
            cpu_ns_per_io: 1234.5,
            ..Default::default()
        },
        depth: DepthReport {
            level_pct: [0.004, 0.0, 0.0, 99.996, 0.0, 0.0, 0.0],
            ..Default::default()
        },
        lat_buckets: LatBuckets {
            ns_pct: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.001, 0.0, 0.0],
            ..Default::default()
        },
        runtime_ns: 157_400_000,
        significant_figures: 4,
        steadystate: None,
        latency_target: None,
        schedule: None,
    };
    RunReport {
        schema_version: SCHEMA_VERSION,
        tool_version: "0.1.0".into(),
        started_unix_ms: 1_795_305_010_426,
        elapsed_ns: None,
        command_line: Vec::new(),
        global_options: Vec::new(),
        jobs: vec![job],
        groups: vec![GroupReport {
            id: 0,
            mixed: None,
            dirs: [
                GroupDirSummary {
                    bw_bytes_per_sec: 117_392_055.0,
                    ..Default::default()
                },
                GroupDirSummary::default(),
                GroupDirSummary::default(),
            ],
        }],
        disks: vec![DiskUtil {
            name: "vda".into(),
            read_ios: 53_398,
            util_pct: 76.75,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn parse(report: &RunReport) -> Value {
    serde_json::from_str(&render(report, Detail::Json)).expect("valid JSON")
}

#[test]
fn a_steady_state_window_not_yet_full_is_padded_with_zeros_as_in_fio() {
    let ss = crate::testutil::steady_state(4, &[200, 100], &[8192, 4096]);
    let json = serde_json::to_value(FioSteadyState::new(&ss)).unwrap();
    let data = &json["data"];
    assert_eq!(
        data["iops"],
        serde_json::json!([200, 100, 0, 0]),
        "fio writes one sample per second of ss_dur, zeros where none was taken: {data}"
    );
    assert_eq!(data["bw"], serde_json::json!([8192, 4096, 0, 0]), "{data}");
    assert_eq!(
        data["iops_mean"], 75,
        "the mean is over the whole window: {data}"
    );
    assert_eq!(
        data["bw_mean"], 3072,
        "the mean is over the whole window: {data}"
    );
}

#[test]
fn key_sets_match_fio() {
    let text = render(&report(69_716.2), Detail::Json);
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let mut top_keys = TOP_KEYS.to_vec();
    top_keys.push("iolens");
    assert_keys(&doc, &top_keys);
    let positions: Vec<usize> = top_keys
        .iter()
        .map(|key| text.find(&format!("\"{key}\"")).unwrap())
        .collect();
    assert!(positions.is_sorted(), "top-level keys out of fio's order");
    let job = &doc["jobs"][0];
    let mut expected_job_keys = JOB_KEYS.to_vec();
    expected_job_keys.push("cpu_ns_per_io");
    assert_keys(job, &expected_job_keys);
    for dir in ["read", "write", "trim"] {
        assert_keys(&job[dir], DIR_KEYS);
        assert_keys(&job[dir]["slat_ns"], LAT_KEYS);
        assert_keys(&job[dir]["lat_ns"], LAT_KEYS);
    }
    let mut with_percentiles = LAT_KEYS.to_vec();
    with_percentiles.push("percentile");
    assert_keys(&job["read"]["clat_ns"], &with_percentiles);
    assert_keys(&job["write"]["clat_ns"], LAT_KEYS);
    assert_keys(&job["read"]["clat_ns"]["percentile"], PERCENTILE_KEYS);
    assert_keys(&job["sync"], SYNC_KEYS);
    assert_keys(&job["sync"]["lat_ns"], &with_percentiles);
    assert_keys(&job["iodepth_level"], &DEPTH_LEVEL_LABELS);
    assert_keys(&job["iodepth_submit"], &DEPTH_BATCH_LABELS);
    assert_keys(&job["iodepth_complete"], &DEPTH_BATCH_LABELS);
    assert_keys(&job["latency_ns"], &LAT_LABELS);
    assert_keys(&job["latency_us"], &LAT_LABELS);
    assert_keys(&job["latency_ms"], &LAT_MS_LABELS);
    assert_keys(&doc["disk_util"][0], DISK_KEYS);
}

#[test]
fn findings_are_in_the_iolens_object_after_fios_keys() {
    let mut with_finding = report(69_716.2);
    with_finding.findings.push(Finding {
        code: "served-from-cache".into(),
        severity: crate::model::Severity::Warning,
        title: "cached".into(),
        evidence: vec!["the job read 16 MiB while the device read 0 B".into()],
        advice: "drop the cache".into(),
        at_ns: Some(5_000),
    });
    for detail in [Detail::Json, Detail::JsonPlus] {
        let doc: Value = serde_json::from_str(&render(&with_finding, detail)).expect("valid JSON");
        let finding = &doc["iolens"]["findings"][0];
        assert_eq!(
            finding,
            &serde_json::json!({
                "code": "served-from-cache",
                "severity": "warning",
                "title": "cached",
                "evidence": ["the job read 16 MiB while the device read 0 B"],
                "advice": "drop the cache",
                "at_ns": 5000,
            }),
            "{detail:?}: expected the finding in iolens.findings, saw {doc}"
        );
    }
    let without = parse(&report(69_716.2));
    assert_eq!(
        without["iolens"],
        serde_json::json!({ "findings": [] }),
        "expected an empty findings list without findings, saw {}",
        without["iolens"]
    );
}

#[test]
fn a_rate_limited_jobs_schedule_is_in_the_iolens_object_and_fios_keys_stay() {
    let mut paced = report(69_716.2);
    paced.jobs[0].schedule = Some(crate::model::ScheduleReport {
        ios: 1_800,
        late_ios: 590,
        corrected: [
            None,
            Some(summary(1_800, vec![(99.0, 1_400_000_000)])),
            None,
        ],
        ..Default::default()
    });
    let doc = parse(&paced);
    let schedule = &doc["iolens"]["schedules"][0];
    assert_eq!(
        schedule["jobname"],
        paced.jobs[0].name.as_str(),
        "{schedule}"
    );
    assert_eq!(
        (&schedule["ios"], &schedule["late_ios"]),
        (&1_800.into(), &590.into())
    );
    assert_eq!(
        schedule["corrected"][1]["percentiles"][0][1],
        1_400_000_000u64
    );
    let job = |doc: &Value| {
        doc["jobs"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(job(&doc), job(&parse(&report(69_716.2))));
}

#[test]
fn elapsed_is_the_runs_time_for_every_job_as_fio() {
    let mut two = report(69_716.2);
    let mut second = two.jobs[0].clone();
    second.runtime_ns = 2_000_000_000;
    two.jobs.push(second);
    two.elapsed_ns = Some(3_001_000_000);
    let doc = parse(&two);
    let elapsed: Vec<Option<u64>> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["elapsed"].as_u64())
        .collect();
    assert_eq!(
        elapsed,
        [Some(4), Some(4)],
        "expected the run's 3001 ms rounded up to whole seconds for both jobs"
    );
    two.elapsed_ns = Some(3_000_999_999);
    assert_eq!(
        parse(&two)["jobs"][1]["elapsed"],
        3,
        "expected whole ms first, as fio"
    );
}

#[test]
fn values_use_fios_units() {
    let doc = parse(&report(69_716.2));
    assert_eq!(doc["fio version"], "fio-3.33-iolens-0.1.0");
    assert_eq!(doc["timestamp"], 1_795_305_010u64);
    assert_eq!(doc["time"], "Sat Nov 21 23:50:10 2026");
    let job = &doc["jobs"][0];
    assert_eq!(job["jobname"], "t\u{1}\"x");
    assert_eq!(job["job options"]["iodepth"], "8");
    assert_eq!(job["latency_depth"], 8);
    assert_eq!(
        (job["elapsed"].as_u64(), job["job_runtime"].as_u64()),
        (Some(1), Some(157))
    );
    let read = &job["read"];
    assert_eq!(
        (read["io_kbytes"].as_u64(), read["bw"].as_u64()),
        (Some(7968), Some(50_751))
    );
    assert_eq!(
        (read["runtime"].as_u64(), read["bw_min"].as_u64()),
        (Some(158), Some(102_984)),
        "fio rounds a direction's runtime up to whole ms: 157.4 ms is 158"
    );
    assert!((read["bw_agg"].as_f64().unwrap() - 97.673).abs() < 1e-3);
    assert_eq!(read["clat_ns"]["percentile"]["99.990000"], 66_048);
    assert_eq!(read["slat_ns"]["N"], 0);
    assert_eq!(job["iodepth_level"]["1"], 0.1);
    assert_eq!(job["latency_ns"]["500"], 0.01);
    assert_eq!(job["cpu_ns_per_io"], 1234.5);
}

#[test]
fn global_options_only_when_given() {
    let mut r = report(1.0);
    r.global_options = vec![("bs".into(), "4k".into())];
    assert_eq!(parse(&r)["global options"]["bs"], "4k");
    // fio's order: after "time", before "jobs".
    let text = render(&r, Detail::Json);
    let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
    assert!(at("time") < at("global options") && at("global options") < at("jobs"));
}

#[test]
fn json_plus_adds_bins_beside_percentiles_only() {
    let r = report(1.0);
    let plain: Value = parse(&r);
    assert!(plain["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
    let plus: Value = serde_json::from_str(&render(&r, Detail::JsonPlus)).unwrap();
    let job = &plus["jobs"][0];
    let bins = job["read"]["clat_ns"]["bins"]
        .as_object()
        .expect("clat bins");
    assert_eq!(bins["1128"], 1000);
    let total: u64 = bins.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(total, job["read"]["total_ios"].as_u64().unwrap());
    assert_eq!(job["sync"]["lat_ns"]["bins"]["192512"], 3);
    // No percentiles, no bins: fio's tools read "bins" as a non-empty histogram.
    assert!(job["read"]["lat_ns"].get("bins").is_none());
    assert!(job["write"]["clat_ns"].get("bins").is_none());
    // Numeric order, not text order ("66048" sorts before "1128" as text).
    let text = render(&r, Detail::JsonPlus);
    assert!(text.find("\"1128\"").unwrap() < text.find("\"66048\"").unwrap());
    let line = render_line(&r, Detail::JsonPlus);
    assert!(!line.contains('\n'));
    assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), plus);
}

#[test]
fn any_figures_give_valid_json_without_nan() {
    for odd in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        1e300,
        f64::MIN_POSITIVE,
    ] {
        let mut r = report(odd);
        let dir = &mut r.jobs[0].dirs[0];
        dir.iops = odd;
        dir.bw_bytes_per_sec = odd;
        dir.bw_samples.mean = odd;
        r.jobs[0].cpu.cpu_ns_per_io = odd;
        r.disks[0].util_pct = odd;
        let text = render(&r, Detail::Json);
        assert!(
            !text.contains("NaN") && !text.contains("null"),
            "{odd}: {text}"
        );
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        assert!(doc["jobs"][0]["read"]["iops"].is_number());
    }
}

/// An object's keys in the order its text has them (`Value` sorts them).
struct KeyOrder(Vec<String>);

impl<'de> serde::Deserialize<'de> for KeyOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(key);
                }
                Ok(KeyOrder(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// The key order of a client document: the top level's, each disk entry's
/// and each client entry's.
#[derive(serde::Deserialize)]
struct ClientKeys {
    client_stats: Vec<KeyOrder>,
    disk_util: Vec<KeyOrder>,
}

fn key_orders(text: &str) -> (Vec<String>, ClientKeys) {
    let top: KeyOrder = serde_json::from_str(text).expect("a JSON object");
    (
        top.0,
        serde_json::from_str(text).expect("a client document"),
    )
}

/// fio 3.33's client document: `fio --client=A job --client=B job
/// --output-format=json` with two `fio --server`s on this machine.
const FIO_CLIENTS: &str = include_str!("../../../../tests/fixtures/fio_client/two_servers.json");

/// Two hosts of two ranks each; each host's first rank sampled its disk `vda`
/// (h0: 100 reads, h1: 7 reads).
fn two_hosts() -> RunReport {
    let rank = |rank: u32, reads: Option<u64>| {
        let mut report = report(69_716.2);
        report.disks = reads.map_or(Vec::new(), |read_ios| {
            vec![DiskUtil {
                name: "vda".into(),
                read_ios,
                util_pct: 50.0,
                ..Default::default()
            }]
        });
        RankRun {
            rank,
            local_rank: rank % 2,
            hostname: format!("h{}", rank / 2),
            total: report.jobs.first().cloned(),
            report,
            ..Default::default()
        }
    };
    let mut all_clients = report(69_716.2);
    all_clients.jobs[0].name = crate::runner::ranks::ALL_CLIENTS.into();
    let mut merged = report(69_716.2);
    merged.disks.clear();
    merged.cluster = Some(Box::new(ClusterReport {
        ranks: vec![
            rank(0, Some(100)),
            rank(1, None),
            rank(2, Some(7)),
            rank(3, None),
        ],
        all_clients,
        observed_hosts: Vec::new(),
    }));
    merged
}

#[test]
fn each_hosts_disks_are_in_disk_util_with_their_host_where_fios_client_puts_them() {
    let text = render(&two_hosts(), Detail::Json);
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let disks: Vec<(&str, &str, u64, u64)> = doc["disk_util"]
        .as_array()
        .expect("a disk_util array")
        .iter()
        .map(|d| {
            let host = d["hostname"].as_str().unwrap_or("no hostname");
            let name = d["name"].as_str().unwrap_or("no name");
            (
                host,
                name,
                d["rank"].as_u64().unwrap(),
                d["read_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        disks,
        [("h0", "vda", 0, 100), ("h1", "vda", 2, 7)],
        "expected each host's vda once, with its own reads (never added across hosts), saw {disks:?}"
    );
    let (fio_top, fio) = key_orders(FIO_CLIENTS);
    let (our_top, ours) = key_orders(&text);
    assert_eq!(
        our_top,
        [fio_top, vec!["iolens".to_string()]].concat(),
        "expected fio's client document's top-level keys in its order, then iolens'"
    );
    let fio_disk = fio.disk_util[0].0.clone();
    for disk in &ours.disk_util {
        assert_eq!(
            disk.0,
            [fio_disk.clone(), vec!["rank".to_string()]].concat(),
            "expected the keys of a disk of fio's client document in its order, then rank"
        );
    }
    let fio_job = &fio.client_stats[0].0;
    let our_job: Vec<&String> = ours.client_stats[0]
        .0
        .iter()
        .filter(|k| !["cpu_ns_per_io", "rank"].contains(&k.as_str()))
        .collect();
    assert_eq!(
        our_job,
        fio_job.iter().collect::<Vec<_>>(),
        "expected a rank's entry to have the keys of a client's in fio's document"
    );
}
