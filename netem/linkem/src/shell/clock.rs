//! CLOCK_MONOTONIC in ns (and the offset from CLOCK_REALTIME), and precise sleeping.

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_MONOTONIC minus CLOCK_REALTIME (wrapping), to turn kernel receive stamps
/// (CLOCK_REALTIME) into monotonic time: `stamp.wrapping_add(offset)`.
pub fn realtime_to_monotonic_offset() -> u64 {
    let rt = clock_ns(libc::CLOCK_REALTIME);
    clock_ns(libc::CLOCK_MONOTONIC).wrapping_sub(rt)
}

/// Ask for ns-precise timer wake-ups on this thread (the default slack is 50 µs).
pub fn tighten_timer_slack() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Wait until `fd` is readable or `timeout_ns` passed (`fd` -1: just sleep).
pub fn wait_readable(fd: i32, timeout_ns: u64) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask change.
    unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
}

/// Run the calling thread under SCHED_FIFO at `prio` so its timer wake-ups are not delayed
/// by other runnable tasks. Returns false (and changes nothing) when not permitted.
pub fn try_realtime(prio: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pid 0 is the calling thread; valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

/// Back to normal (CFS) scheduling; true on success.
pub fn set_normal() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) == 0 }
}
