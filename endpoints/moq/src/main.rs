fn main() -> std::process::ExitCode {
    quicsetup::shell::main(moq::run_argv)
}
