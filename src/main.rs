//! The iolens binary: the command line to `dispatch` (or to the fio drop-in when run as `fio`), and its exit code.
fn main() {
    let words = iolens::command_line_words();
    if iolens::invoked_as_fio(&words[0]) {
        std::process::exit(iolens::run_as_fio(&words[1..]));
    }
    let cli = iolens::parse_command_line(&words);
    std::process::exit(iolens::dispatch(cli, &words));
}
