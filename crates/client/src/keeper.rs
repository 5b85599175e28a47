//! Keeping a complete view from snapshots and change frames.

use spades_protocol::{ServerMessage, TableView};

/// The view a connection holds: the last snapshot with every change since
/// applied, and whether a `sync` is awaited after a gap.
#[derive(Debug, Default, Clone)]
pub struct ViewKeeper {
    view: Option<(u64, Box<TableView>)>,
    syncing: bool,
}

/// What [`ViewKeeper::receive`] made of a frame.
#[derive(Debug)]
pub enum Kept {
    /// A new complete view (a snapshot, or the last one with a change
    /// applied).
    View(u64, Box<TableView>),
    /// A frame that is not about the view: pass it on.
    Other(ServerMessage),
    /// A stale frame, or a change while a snapshot is awaited: nothing to do.
    Nothing,
    /// A change that does not follow the view held: send `sync` (and call
    /// [`ViewKeeper::syncing`]).
    Gap,
}

impl ViewKeeper {
    /// A keeper with no view yet.
    #[must_use]
    pub fn new() -> ViewKeeper {
        ViewKeeper::default()
    }

    /// The view held, with its `seq`.
    #[must_use]
    pub fn view(&self) -> Option<(u64, &TableView)> {
        self.view.as_ref().map(|(seq, v)| (*seq, &**v))
    }

    /// A `sync` was sent: changes are dropped until the snapshot comes.
    pub fn syncing(&mut self) {
        self.syncing = true;
    }

    /// True while a snapshot is awaited.
    #[must_use]
    pub fn is_syncing(&self) -> bool {
        self.syncing
    }

    /// Forgets the view (a new connection, another table).
    pub fn reset(&mut self) {
        *self = ViewKeeper::default();
    }

    /// Takes a frame from the server.
    pub fn receive(&mut self, msg: ServerMessage) -> Kept {
        match msg {
            ServerMessage::View { seq, view } => {
                if self.view.as_ref().is_some_and(|(last, v)| seq < *last && v.table == view.table) {
                    return Kept::Nothing;
                }
                self.syncing = false;
                self.view = Some((seq, view.clone()));
                Kept::View(seq, view)
            }
            ServerMessage::Change { seq, change } => {
                if self.syncing {
                    return Kept::Nothing;
                }
                match self.view.as_mut() {
                    Some((last, _)) if seq <= *last => Kept::Nothing,
                    Some((last, view)) if seq == *last + 1 => {
                        if view.apply(&change).is_err() {
                            self.view = None;
                            return Kept::Gap;
                        }
                        *last = seq;
                        Kept::View(seq, view.clone())
                    }
                    _ => Kept::Gap,
                }
            }
            other => Kept::Other(other),
        }
    }
}
