//! The allocator settings of the sim's one process. A run allocates and frees large buffers
//! over and over (a DTP receiver a zeroed 200 KB block per block); glibc's malloc serves
//! each from a fresh `mmap` and returns it with `munmap`, so every block faults its pages in
//! and has the kernel zero them again: a fifth of a DTP run's CPU. Keeping such buffers on
//! the heap (no mmap below 64 MiB, no trimming of the heap's top below 128 MiB) reuses the
//! memory instead. Only where memory comes from changes, never what the program computes.

/// Apply the settings (before the run allocates anything large).
pub fn apply() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's malloc parameters; called before any thread
    // that allocates starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
    }
}
