fn main() -> std::process::ExitCode {
    quicsetup::shell::main(rise::run_argv)
}
