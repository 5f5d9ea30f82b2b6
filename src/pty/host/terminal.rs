//! The PTY master: reading output in bounded turns (each chunk one
//! revision, into the model and to attached clients) and writing committed
//! input in order, whatever the kernel accepts per write.

use super::*;
use crate::pty::queries::{Piece, Query};

impl Host {
    /// Reads the master until WouldBlock or until `MASTER_READ_BUDGET` bytes
    /// were read this turn, so a program that floods the terminal cannot
    /// starve the clients; `master_backlog` brings the loop back at once.
    /// Each chunk moves the revision once, feeds the model and goes to every
    /// attached client. EIO means the last slave closed: end of file, not a
    /// failure.
    ///
    /// N.B. a send-if compared after a budget-limited read is still exact:
    /// if any chunk was read the revision moved, so a caller's expected
    /// revision from before cannot match; if none was, the master was drained.
    pub(super) fn read_master(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        let mut budget = MASTER_READ_BUDGET;
        self.master_backlog = false;
        loop {
            let Some(master) = self.child.master.as_ref() else {
                return;
            };
            if budget == 0 {
                self.master_backlog = true;
                return;
            }
            match nix::unistd::read(master, &mut buf) {
                Ok(0) | Err(Errno::EIO) => {
                    self.drop_master();
                    return;
                }
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    for piece in self.queries.feed(&buf[..n]) {
                        match piece {
                            Piece::Show(bytes) => self.show(&bytes),
                            Piece::Ask(query) => self.answer(query),
                        }
                    }
                    // Output moves the revision and its time (no output
                    // comes of it: the machine only notes the facts).
                    let now = self.time(Instant::now());
                    let bracketed_paste = self.screen.bracketed_paste();
                    self.order
                        .handle_input(Input::Output { bracketed_paste }, now);
                }
                Err(Errno::EAGAIN) => return,
                Err(Errno::EINTR) => continue,
                Err(err) => {
                    self.log(json!({"event": "pty-read-error", "error": err.to_string()}));
                    self.drop_master();
                    return;
                }
            }
        }
    }

    /// Output for the screen model and every attached client.
    fn show(&mut self, bytes: &[u8]) {
        self.screen.handle_output(bytes);
        for client in self.clients.values_mut() {
            if client.mode == Mode::Attach {
                client.send_output(bytes);
            }
        }
    }

    /// Answers a terminal query as the terminal (`queries.rs`): from the
    /// screen as the output before it left it, once, attached or not. The
    /// answer goes to the program ahead of anything queued behind a
    /// transaction (a terminal answers at once); it is nobody's keys.
    fn answer(&mut self, query: Query) {
        let (row, col) = self.screen.cursor();
        let answer = query.answer(row, col);
        self.to_master.extend(answer);
        self.flush_master();
    }

    /// Writes committed input until the kernel refuses more; the rest waits
    /// for writable. A transaction waiting for its bytes to land continues.
    pub(super) fn write_master(&mut self) {
        self.flush_master();
        self.drive(None);
    }

    pub(super) fn update_master_interest(&mut self) {
        let Some(master) = self.child.master.as_ref() else {
            return;
        };
        let wanted = if self.to_master.is_empty() {
            Interest::READABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
        if self.master_interest != Some(wanted) {
            let fd = master.as_raw_fd();
            if self
                .poll
                .registry()
                .reregister(&mut SourceFd(&fd), MASTER, wanted)
                .is_ok()
            {
                self.master_interest = Some(wanted);
            }
        }
    }

    /// The screen moved without output (a resize, a new child's screen).
    pub(super) fn redrawn(&mut self) {
        let bracketed_paste = self.screen.bracketed_paste();
        self.drive(Some(Input::Redrawn { bracketed_paste }));
    }

    /// Writes `to_master` in order until it is empty or the kernel's buffer
    /// is full. A failed write means the terminal is gone: those bytes can
    /// reach no one, so they are dropped with it.
    pub(super) fn flush_master(&mut self) {
        while !self.to_master.is_empty() {
            let Some(master) = self.child.master.as_ref() else {
                self.to_master.clear();
                return;
            };
            let (front, _) = self.to_master.as_slices();
            match nix::unistd::write(master, front) {
                Ok(n) => {
                    self.to_master.drain(..n);
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    self.to_master.clear();
                    return;
                }
            }
        }
    }

    pub(super) fn pending_input(&self) -> usize {
        self.to_master.len() + self.order.queued_bytes()
    }

    pub(super) fn resize(&mut self, size: Size) -> Result<(), String> {
        if size.cols == 0 || size.rows == 0 || size.cols > MAX_SIDE || size.rows > MAX_SIDE {
            return Err(format!(
                "size {}x{} is outside 1x1..{MAX_SIDE}x{MAX_SIDE}",
                size.cols, size.rows
            ));
        }
        if let Some(master) = self.child.master.as_ref() {
            child::set_size(master, size).map_err(|e| format!("{e:#}"))?;
        }
        self.size = size;
        self.screen.resize(size);
        self.redrawn();
        Ok(())
    }
}
