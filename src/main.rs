//! The iolens binary: the command line to `dispatch` (or to the fio drop-in when run as `fio`), and its exit code.
fn main() {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    if iolens::invoked_as_fio(&argv0) {
        let fio_args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
        std::process::exit(iolens::run_as_fio(&fio_args));
    }
    let cli = iolens::parse_command_line();
    std::process::exit(iolens::dispatch(cli));
}
