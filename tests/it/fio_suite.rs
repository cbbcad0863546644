//! What fio's own test suite (bench/fio-testsuite) needs from the fio drop-in beyond job
//! options: fio's client/server mode refused with the way to go instead.

use crate::fio_command_line::shim;
use crate::support::{iolens, scratch, stderr};

#[test]
fn fios_network_mode_is_refused_pointing_to_mpi() {
    let dir = scratch();
    let fio = shim(dir.path());
    for (line, flag) in [
        (vec!["--server"], "--server"),
        (vec!["--server=ip:localhost,8765"], "--server"),
        (vec!["-daemonize=/tmp/never.pid", "--server"], "--daemonize"),
        (vec!["--client=localhost", "job.fio"], "--client"),
        (
            vec!["--client", "h1", "--remote-config", "job.fio"],
            "--client",
        ),
    ] {
        let out = fio(&line);
        let said = stderr(&out);
        assert!(
            out.status.code() == Some(2)
                && said.lines().count() == 1
                && said.contains(flag)
                && said.contains("mpirun"),
            "expected fio {line:?} to be refused (exit 2) in one line naming {flag} and mpirun, \
             got {:?}: {said}",
            out.status.code()
        );
    }
    let run = iolens(&[
        "run",
        "--no-history",
        "--client=h1",
        "--name=x",
        "--ioengine=null",
    ]);
    assert!(
        run.status.code() == Some(2) && stderr(&run).contains("--client"),
        "expected `iolens run --client=h1` to be refused the same way, got {:?}: {}",
        run.status.code(),
        stderr(&run)
    );
}
