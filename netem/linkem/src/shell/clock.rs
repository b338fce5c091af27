//! CLOCK_MONOTONIC and CLOCK_REALTIME in ns (and the offset between them), the kernel's
//! receive stamp of a message, and precise sleeping. lkprobe includes this file as its
//! `clock` module (one clock for both binaries).

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

pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// The SO_TIMESTAMPNS stamp (CLOCK_REALTIME ns) of a received message, if present.
pub fn kernel_stamp_ns(h: &libc::msghdr) -> Option<u64> {
    // SAFETY: walking the control buffer the kernel filled, with the libc CMSG macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// CLOCK_MONOTONIC minus CLOCK_REALTIME (wrapping), to turn kernel receive stamps
/// (CLOCK_REALTIME) into monotonic time: `stamp.wrapping_add(offset)`.
pub fn realtime_to_monotonic_offset() -> u64 {
    let rt = realtime_ns();
    monotonic_ns().wrapping_sub(rt)
}

/// Ask for ns-precise timer wake-ups on this thread (the default slack is 50 µs).
pub fn tighten_timer_slack() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Sleep until CLOCK_MONOTONIC reaches `t_ns`.
#[allow(dead_code)] // lkprobe's pacing; linkem waits with `wait_readable`
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; an interrupted sleep only wakes early.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
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
