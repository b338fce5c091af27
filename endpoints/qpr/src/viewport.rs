//! The viewport priority model: a geometric stand-in for the paper's user trace.
//!
//! [QPR §IV-A] (after its ref. [29]): "the four point cloud objects are placed in a
//! circle, looking outwards and the user moves around these objects, always focusing on the
//! center of the circle"; §IV-B: priority = visible area of the object, distance as the
//! tie-breaker; the viewport is known in advance (clairvoyant). The paper gives no
//! dimensions, so (every value an assumption, `Geometry::default`):
//! - object i stands at angle i·90° on a circle of radius 1 m, its front facing outward;
//!   each is an upright box 0.6 m wide, 0.3 m deep, 1.8 m tall (a person, as in the 8i
//!   full-body clips);
//! - the viewer walks on a circle of radius 3 m, one lap per 60 s, starting at angle 0
//!   (in front of object 0), eyes at object mid-height, looking at the centre, with a
//!   90° horizontal field of view (a typical HMD);
//! - visible area = projected area / distance² (the solid angle the object fills), where
//!   the projected width of the box seen at angle α from its front normal is
//!   w·|cos α| + d·|sin α|, times the fraction of the object's horizontal angular extent
//!   neither outside the field of view nor hidden behind a nearer object (1-D occlusion in
//!   azimuth; heights are equal, so azimuth decides).

use std::f64::consts::PI;

use crate::OBJECTS;

#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub object_ring_m: f64,
    pub viewer_ring_m: f64,
    pub width_m: f64,
    pub depth_m: f64,
    pub height_m: f64,
    pub lap_s: f64,
    pub start_deg: f64,
    pub fov_deg: f64,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            object_ring_m: 1.0,
            viewer_ring_m: 3.0,
            width_m: 0.6,
            depth_m: 0.3,
            height_m: 1.8,
            lap_s: 60.0,
            start_deg: 0.0,
            fov_deg: 90.0,
        }
    }
}

/// What the viewer sees of one object at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    pub object: usize,
    /// steradian-like: projected area (m²) × visible fraction / distance² (m²)
    pub visible_area: f64,
    pub distance_m: f64,
}

fn wrap(a: f64) -> f64 {
    let mut x = (a + PI) % (2.0 * PI);
    if x < 0.0 {
        x += 2.0 * PI;
    }
    x - PI
}

/// Length of `[lo, hi]` not covered by the union of `cover`.
fn uncovered(lo: f64, hi: f64, cover: &mut [(f64, f64)]) -> f64 {
    cover.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free = 0.0;
    let mut at = lo;
    for &(a, b) in cover.iter() {
        if b <= at {
            continue;
        }
        if a >= hi {
            break;
        }
        if a > at {
            free += a.min(hi) - at;
        }
        at = at.max(b);
        if at >= hi {
            return free;
        }
    }
    free + (hi - at).max(0.0)
}

impl Geometry {
    /// The viewer's position (m) at media time `t_s`.
    pub fn viewer_at(&self, t_s: f64) -> (f64, f64) {
        let a = self.start_deg.to_radians() + 2.0 * PI * t_s / self.lap_s;
        (self.viewer_ring_m * a.cos(), self.viewer_ring_m * a.sin())
    }

    /// What the viewer sees of every object at media time `t_s`.
    pub fn views(&self, t_s: f64) -> [View; OBJECTS] {
        let (vx, vy) = self.viewer_at(t_s);
        let look = (-vy).atan2(-vx); // towards the centre
        let half_fov = self.fov_deg.to_radians() / 2.0;
        // per object: distance, azimuth interval (relative to the look direction), area
        let mut geo = [(0.0f64, 0.0f64, 0.0f64, 0.0f64); OBJECTS];
        for (i, g) in geo.iter_mut().enumerate() {
            let phi = i as f64 * 2.0 * PI / OBJECTS as f64;
            let (ox, oy) = (
                self.object_ring_m * phi.cos(),
                self.object_ring_m * phi.sin(),
            );
            let (dx, dy) = (vx - ox, vy - oy);
            let dist = dx.hypot(dy);
            let alpha = wrap(dy.atan2(dx) - phi); // from the front normal to the viewer
            let proj_w = self.width_m * alpha.cos().abs() + self.depth_m * alpha.sin().abs();
            let az = wrap((-dy).atan2(-dx) - look);
            let half = (proj_w / 2.0 / dist).atan();
            *g = (
                dist,
                az - half,
                az + half,
                proj_w * self.height_m / (dist * dist),
            );
        }
        let mut out = [View {
            object: 0,
            visible_area: 0.0,
            distance_m: 0.0,
        }; OBJECTS];
        for i in 0..OBJECTS {
            let (dist, lo, hi, area) = geo[i];
            let mut cover: Vec<(f64, f64)> = (0..OBJECTS)
                .filter(|&j| j != i && (geo[j].0, j) < (dist, i))
                .map(|j| (geo[j].1, geo[j].2))
                .collect();
            let (clo, chi) = (lo.max(-half_fov), hi.min(half_fov));
            let free = if chi > clo {
                uncovered(clo, chi, &mut cover)
            } else {
                0.0
            };
            out[i] = View {
                object: i,
                visible_area: area * free / (hi - lo),
                distance_m: dist,
            };
        }
        out
    }

    /// Objects from the highest priority to the lowest at media time `t_s`: larger visible
    /// area first, then nearer ([QPR §IV-B]), then lower index.
    pub fn ranking(&self, t_s: f64) -> [usize; OBJECTS] {
        rank(&self.views(t_s))
    }
}

/// The priority order of `views`: larger visible area first, then nearer, then lower index.
pub fn rank(views: &[View; OBJECTS]) -> [usize; OBJECTS] {
    let mut order = [0, 1, 2, 3];
    order.sort_by(|&a, &b| {
        let (va, vb) = (&views[a], &views[b]);
        vb.visible_area
            .total_cmp(&va.visible_area)
            .then(va.distance_m.total_cmp(&vb.distance_m))
            .then(a.cmp(&b))
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_in_front_of_the_viewer_ranks_first_and_the_one_behind_it_last() {
        let g = Geometry::default();
        // t = 0: viewer at angle 0, in front of object 0; object 2 is straight behind it
        let v = g.views(0.0);
        assert_eq!(g.ranking(0.0)[0], 0);
        assert_eq!(g.ranking(0.0)[3], 2);
        // object 2 is exactly behind object 0, which is nearer and wider: fully hidden
        assert_eq!(v[2].visible_area, 0.0);
        // objects 1 and 3 are mirror images: equal area and distance, index breaks the tie
        assert!((v[1].visible_area - v[3].visible_area).abs() < 1e-12);
        assert_eq!(g.ranking(0.0), [0, 1, 3, 2]);
    }

    #[test]
    fn ranking_follows_the_viewer_around_the_circle() {
        let g = Geometry::default();
        // a quarter lap later the viewer is in front of object 1, then 2, then 3
        for (k, want) in [(1, 1), (2, 2), (3, 3), (4, 0)] {
            let t = g.lap_s * k as f64 / 4.0;
            assert_eq!(g.ranking(t)[0], want, "t = {t}");
        }
        // between objects 0 and 1 (45°) both are equally near: they share the top two
        let r = g.ranking(g.lap_s / 8.0);
        let mut top: Vec<usize> = r[..2].to_vec();
        top.sort();
        assert_eq!(top, vec![0, 1]);
    }

    #[test]
    fn area_falls_with_distance_and_a_narrow_fov_hides_objects() {
        let near = Geometry::default();
        let far = Geometry {
            viewer_ring_m: 6.0,
            ..near
        };
        assert!(far.views(0.0)[0].visible_area < near.views(0.0)[0].visible_area / 3.0);
        let narrow = Geometry {
            fov_deg: 5.0,
            ..near
        };
        let v = narrow.views(0.0);
        assert!(v[0].visible_area > 0.0);
        assert_eq!(v[1].visible_area, 0.0);
        assert_eq!(v[3].visible_area, 0.0);
    }

    #[test]
    fn distance_breaks_ties_of_equal_area() {
        let mk = |o, a, d| View {
            object: o,
            visible_area: a,
            distance_m: d,
        };
        let v = [
            mk(0, 0.1, 4.0),
            mk(1, 0.1, 2.0),
            mk(2, 0.3, 5.0),
            mk(3, 0.0, 1.0),
        ];
        assert_eq!(rank(&v), [2, 1, 0, 3]);
    }

    #[test]
    fn uncovered_length_of_an_interval() {
        assert_eq!(uncovered(0.0, 1.0, &mut []), 1.0);
        assert!((uncovered(0.0, 1.0, &mut [(0.2, 0.4), (0.3, 0.5)]) - 0.7).abs() < 1e-12);
        assert_eq!(uncovered(0.0, 1.0, &mut [(-1.0, 2.0)]), 0.0);
        assert!((uncovered(0.0, 1.0, &mut [(0.9, 3.0), (-1.0, 0.1)]) - 0.8).abs() < 1e-12);
    }
}
