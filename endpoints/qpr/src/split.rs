//! The reliable/unreliable split per Q level ([QPR §IV-D]): Q is the unreliable share
//! of the four objects; the lowest-priority ones go unreliable. Q0 = all reliable (the
//! paper's "reliable QUIC", QR), Q50 = QPR (top two reliable, "by default"), Q75, Q100 =
//! all unreliable.

use crate::OBJECTS;

/// The allowed Q levels: multiples of 100 / OBJECTS.
pub const Q_LEVELS: [u32; 5] = [0, 25, 50, 75, 100];

/// How many of the objects are requested unreliably at `q_pct`; None if not in Q_LEVELS.
pub fn unreliable_count(q_pct: u32) -> Option<usize> {
    Q_LEVELS
        .contains(&q_pct)
        .then(|| q_pct as usize * OBJECTS / 100)
}

/// Per object: true if requested reliably, given the priority `ranking` (highest first).
pub fn reliable(ranking: &[usize; OBJECTS], unreliable: usize) -> [bool; OBJECTS] {
    let mut r = [true; OBJECTS];
    for &o in &ranking[OBJECTS - unreliable.min(OBJECTS)..] {
        r[o] = false;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_levels_map_to_the_number_of_unreliable_objects() {
        assert_eq!(unreliable_count(0), Some(0));
        assert_eq!(unreliable_count(50), Some(2));
        assert_eq!(unreliable_count(75), Some(3));
        assert_eq!(unreliable_count(100), Some(4));
        assert_eq!(unreliable_count(60), None);
    }

    #[test]
    fn the_lowest_ranked_objects_go_unreliable() {
        let rank = [2, 0, 3, 1];
        assert_eq!(reliable(&rank, 0), [true; 4]);
        assert_eq!(reliable(&rank, 2), [true, false, true, false]);
        assert_eq!(reliable(&rank, 3), [false, false, true, false]);
        assert_eq!(reliable(&rank, 4), [false; 4]);
    }
}
