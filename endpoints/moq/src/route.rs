//! Which unidirectional stream each frame goes on, with which quinn priority (higher is sent
//! first; round robin among equals), and when a stream is finished or abandoned.
//!
//! - **FEFS** ([MoQ] "implicit prioritization", First Encode First Send): one stream,
//!   frames in decode order.
//! - **FT** ([MoQ] "prioritization by frame type"): one stream per picture type, strict
//!   priority I (2) > P (1) > B (0); each stream carries its type's frames in decode order.
//! - **Group** (beyond the paper; the newest-group-first delivery of current MoQ relays): one
//!   stream per group (GoP), priority = the group's sequence number, so a newer group always
//!   goes first; frames in decode order on it. When group g starts, group g−1's stream is
//!   finished, and every group older than g − `max_group_lag` still open is abandoned (its
//!   stream reset: data not yet sent is dropped, lost data is not retransmitted).
//!
//! A priority is set once, when the stream opens, before any data is written (quinn applies
//! a changed priority only when a stream is re-queued).

use crate::trace::Release;
use crate::Pict;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Fefs,
    Ft,
    Group { max_group_lag: u64 },
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Fefs => "fefs",
            Scheme::Ft => "ft",
            Scheme::Group { .. } => "group",
        }
    }
}

/// A stream of the connection, by what it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamKey {
    Single,
    Type(Pict),
    Group(u64),
}

impl StreamKey {
    /// A short label for the logs: `all`, `I`/`P`/`B`, `g<n>`.
    pub fn label(self) -> String {
        match self {
            StreamKey::Single => "all".into(),
            StreamKey::Type(p) => p.as_str().into(),
            StreamKey::Group(g) => format!("g{g}"),
        }
    }
}

/// What the shell does with its streams, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Open { key: StreamKey, priority: i32 },
    Finish { key: StreamKey },
    Reset { key: StreamKey },
    Write { key: StreamKey },
}

#[derive(Debug)]
pub struct Router {
    scheme: Scheme,
    /// Streams not reset, and whether they are finished already.
    open: Vec<(StreamKey, bool)>,
}

fn type_priority(p: Pict) -> i32 {
    match p {
        Pict::I => 2,
        Pict::P => 1,
        Pict::B => 0,
    }
}

impl Router {
    pub fn new(scheme: Scheme) -> Self {
        Router {
            scheme,
            open: Vec::new(),
        }
    }

    fn ensure_open(&mut self, key: StreamKey, priority: i32, out: &mut Vec<Action>) {
        if !self.open.iter().any(|(k, _)| *k == key) {
            self.open.push((key, false));
            out.push(Action::Open { key, priority });
        }
    }

    /// The actions for releasing `f` (frames come in decode order).
    pub fn on_frame(&mut self, f: &Release) -> Vec<Action> {
        let mut out = Vec::new();
        let key = match self.scheme {
            Scheme::Fefs => {
                self.ensure_open(StreamKey::Single, 0, &mut out);
                StreamKey::Single
            }
            Scheme::Ft => {
                let key = StreamKey::Type(f.pict);
                self.ensure_open(key, type_priority(f.pict), &mut out);
                key
            }
            Scheme::Group { max_group_lag } => {
                let key = StreamKey::Group(f.group);
                if !self.open.iter().any(|(k, _)| *k == key) {
                    let mut keep = Vec::new();
                    for (k, mut finished) in std::mem::take(&mut self.open) {
                        let StreamKey::Group(g) = k else { continue };
                        if g + max_group_lag < f.group {
                            out.push(Action::Reset { key: k });
                            continue;
                        }
                        if !finished {
                            out.push(Action::Finish { key: k });
                            finished = true;
                        }
                        keep.push((k, finished));
                    }
                    self.open = keep;
                    let priority = i32::try_from(f.group).unwrap_or(i32::MAX);
                    self.ensure_open(key, priority, &mut out);
                }
                key
            }
        };
        out.push(Action::Write { key });
        out
    }

    /// Streams still open at the end of the run, to finish.
    pub fn finish_all(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.open)
            .into_iter()
            .filter(|(_, finished)| !finished)
            .map(|(key, _)| Action::Finish { key })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(frame_id: u64, pict: Pict, group: u64) -> Release {
        Release {
            frame_id,
            clip_index: 0,
            pict,
            size_bytes: 100,
            group,
            capture_us: 0,
            release_us: 0,
        }
    }

    fn run(scheme: Scheme, frames: &[(Pict, u64)]) -> Vec<Action> {
        let mut r = Router::new(scheme);
        let mut out = Vec::new();
        for (i, &(p, g)) in frames.iter().enumerate() {
            out.extend(r.on_frame(&rel(i as u64, p, g)));
        }
        out.extend(r.finish_all());
        out
    }

    use Action::*;
    use StreamKey::*;

    #[test]
    fn fefs_is_one_stream_in_decode_order() {
        let a = run(Scheme::Fefs, &[(Pict::I, 0), (Pict::P, 0), (Pict::B, 0)]);
        let s = Single;
        assert_eq!(
            a,
            vec![
                Open {
                    key: s,
                    priority: 0
                },
                Write { key: s },
                Write { key: s },
                Write { key: s },
                Finish { key: s }
            ]
        );
    }

    #[test]
    fn ft_is_one_stream_per_type_i_above_p_above_b() {
        let a = run(
            Scheme::Ft,
            &[(Pict::I, 0), (Pict::P, 0), (Pict::B, 0), (Pict::B, 0)],
        );
        let opens: Vec<_> = a
            .iter()
            .filter_map(|x| match x {
                Open { key, priority } => Some((*key, *priority)),
                _ => None,
            })
            .collect();
        assert_eq!(
            opens,
            vec![(Type(Pict::I), 2), (Type(Pict::P), 1), (Type(Pict::B), 0)]
        );
        let writes: Vec<_> = a
            .iter()
            .filter_map(|x| match x {
                Write { key } => Some(*key),
                _ => None,
            })
            .collect();
        assert_eq!(
            writes,
            vec![Type(Pict::I), Type(Pict::P), Type(Pict::B), Type(Pict::B)]
        );
        assert_eq!(a.iter().filter(|x| matches!(x, Finish { .. })).count(), 3);
    }

    #[test]
    fn groups_newest_first_and_abandoned_past_the_lag() {
        let frames = [
            (Pict::I, 0),
            (Pict::P, 0),
            (Pict::I, 1),
            (Pict::I, 2),
            (Pict::I, 3),
        ];
        let a = run(Scheme::Group { max_group_lag: 1 }, &frames);
        assert_eq!(
            a,
            vec![
                Open {
                    key: Group(0),
                    priority: 0
                },
                Write { key: Group(0) },
                Write { key: Group(0) },
                Finish { key: Group(0) },
                Open {
                    key: Group(1),
                    priority: 1
                },
                Write { key: Group(1) },
                // group 2 starts: 0 is more than one group behind: reset; 1 is finished
                Reset { key: Group(0) },
                Finish { key: Group(1) },
                Open {
                    key: Group(2),
                    priority: 2
                },
                Write { key: Group(2) },
                Reset { key: Group(1) },
                Finish { key: Group(2) },
                Open {
                    key: Group(3),
                    priority: 3
                },
                Write { key: Group(3) },
                Finish { key: Group(3) },
            ]
        );
    }

    #[test]
    fn a_large_lag_never_abandons() {
        let frames: Vec<_> = (0..6).map(|g| (Pict::I, g)).collect();
        let a = run(Scheme::Group { max_group_lag: 10 }, &frames);
        assert!(!a.iter().any(|x| matches!(x, Reset { .. })));
    }
}
