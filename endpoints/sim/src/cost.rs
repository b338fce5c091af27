//! What a run costs in real time: wall seconds and this process's CPU seconds. The only
//! module of priolab-sim that reads the wall clock (everything else runs on virtual time).

use std::time::Instant;

/// A start point for measuring wall and CPU time.
pub struct Meter {
    wall0: Instant,
    cpu0_s: f64,
}

impl Meter {
    pub fn start() -> Self {
        Meter {
            wall0: Instant::now(),
            cpu0_s: cpu_s(),
        }
    }

    /// (wall seconds, CPU seconds) since `start`.
    pub fn read(&self) -> (f64, f64) {
        (self.wall0.elapsed().as_secs_f64(), cpu_s() - self.cpu0_s)
    }
}

/// User + system CPU time of this process (getrusage), in seconds.
fn cpu_s() -> f64 {
    // SAFETY: getrusage fills a zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
