//! Client connections: accepting with the peer uid check, reading request
//! lines and attach frames within their bounds, and answering each request.

use super::*;

impl Host {
    pub(super) fn accept_all(&mut self) {
        loop {
            let (mut stream, _) = match self.listener.accept() {
                Ok(pair) => pair,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    self.log(json!({"event": "accept-error", "error": err.to_string()}));
                    return;
                }
            };
            // Without credentials there is no proof of identity: refuse.
            let (uid, pid) = private_socket::peer_credentials(&stream).unwrap_or((u32::MAX, 0));
            if uid != self.uid {
                self.log(json!({"event": "refused", "peerUid": uid, "peerPid": pid}));
                let mut refusal = Connection::new(stream, pid);
                refusal.send_line(&ServerLine::Error(ErrorReply {
                    error: ErrorKind::Forbidden,
                    message: format!("uid {uid} may not use this terminal"),
                }));
                // One best-effort write; the connection is dropped either way.
                refusal.flush();
                continue;
            }
            let token = Token(self.next_token);
            self.next_token += 1;
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE)
                .is_err()
            {
                continue;
            }
            self.clients.insert(token, Connection::new(stream, pid));
            // Edge-triggered: bytes that arrived with the connection produce
            // no later event, so read now.
            self.read_client(token);
        }
    }

    /// Handles what the client already sent, then reads and handles more,
    /// chunk by chunk, while it may: until WouldBlock, or until this turn's
    /// budget is spent, the input queue is full or the client's replies are
    /// unread (then it is `stalled`, and read again once that has changed).
    pub(super) fn read_client(&mut self, token: Token) {
        let mut budget = MAX_REQUEST_LINE + 1;
        loop {
            self.process_client(token);
            let over = self.pending_input() >= MAX_PENDING_INPUT;
            let Some(client) = self.clients.get_mut(&token) else {
                return;
            };
            if client.dead || client.closing {
                return;
            }
            if over || client.replies_unread() || budget == 0 {
                client.stalled = true;
                return;
            }
            client.stalled = false;
            match client.fill_once(MAX_REQUEST_LINE + 1) {
                Fill::Read(n) => budget = budget.saturating_sub(n),
                Fill::Drained => return,
                // `process_client` leaves a full buffer only when the
                // client's replies stopped it; come back when they drain.
                Fill::Full => {
                    client.stalled = true;
                    return;
                }
                // A peer that only shut down its write side still gets the
                // replies already queued for it.
                Fill::Closed => {
                    client.closing = true;
                    return;
                }
            }
        }
    }

    /// Handles every complete request line or frame in the client's buffer.
    pub(super) fn process_client(&mut self, token: Token) {
        loop {
            let Some(client) = self.clients.get_mut(&token) else {
                return;
            };
            if client.closing || client.dead {
                return;
            }
            match client.mode {
                Mode::Control | Mode::Watch => {
                    if client.replies_unread() {
                        // The rest waits until the peer reads its replies.
                        client.stalled = true;
                        return;
                    }
                    match next_request(&mut client.inbuf) {
                        NextRequest::Line(line) => self.handle_line(token, &line),
                        NextRequest::Oversized => return refuse_oversized(client),
                        NextRequest::Incomplete => return,
                    }
                }
                Mode::Attach => match parse_frame(&client.inbuf) {
                    Parsed::Incomplete => return,
                    Parsed::Invalid(why) => {
                        client.dead = true;
                        self.log(json!({"event": "attach-protocol-error", "error": why}));
                        return;
                    }
                    Parsed::Frame {
                        kind,
                        payload,
                        consumed,
                    } => {
                        client.inbuf.drain(..consumed);
                        self.handle_frame(token, kind, payload);
                    }
                },
            }
        }
    }

    pub(super) fn handle_frame(&mut self, token: Token, kind: FrameKind, payload: Vec<u8>) {
        match kind {
            FrameKind::Data => {
                if !payload.is_empty() {
                    self.drive(Some(Input::Keys(payload)));
                }
            }
            FrameKind::Resize => {
                if let Some(size) = parse_resize(&payload) {
                    // An impossible size from a terminal is ignored, not fatal.
                    let _ = self.resize(size);
                }
            }
            FrameKind::Detach => {
                if let Some(client) = self.clients.get_mut(&token) {
                    client.closing = true;
                }
            }
            FrameKind::Exit => {
                if let Some(client) = self.clients.get_mut(&token) {
                    client.dead = true;
                }
            }
        }
    }

    pub(super) fn handle_line(&mut self, token: Token, line: &[u8]) {
        let request = match decode_request(line) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(refusal) => return self.reply(token, ServerLine::Error(refusal)),
        };
        match request {
            Request::Status {} => {
                // Fresh: output already waiting in the PTY counts.
                self.read_master();
                let status = self.status();
                self.reply(token, ServerLine::Reply(Reply::Status(status)));
            }
            Request::Snapshot {} => {
                self.read_master();
                let line = self.snapshot_line();
                if let Some(client) = self.clients.get_mut(&token) {
                    client.outbuf.extend_from_slice(&line);
                }
            }
            Request::SendIf {
                session,
                incarnation,
                generation,
                expected_revision,
                steps,
                quiet_input_ms,
                settled_output_ms,
                hold_input_ms,
                withdraw,
            } => {
                if let Some(ms) = [quiet_input_ms, settled_output_ms]
                    .into_iter()
                    .flatten()
                    .find(|&ms| ms > MAX_QUIET_MS)
                {
                    let message = format!("a quiet of {ms} ms is over {MAX_QUIET_MS} ms");
                    return self.error(token, ErrorKind::InvalidArgument, message);
                }
                if let Some(ms) = hold_input_ms.filter(|&ms| ms > MAX_HOLD_INPUT_MS) {
                    let message = format!("a hold of {ms} ms is over {MAX_HOLD_INPUT_MS} ms");
                    return self.error(token, ErrorKind::InvalidArgument, message);
                }
                let hold = match HoldAsk::new(hold_input_ms, withdraw) {
                    Ok(hold) => hold,
                    Err(message) => return self.error(token, ErrorKind::InvalidArgument, message),
                };
                let condition = Condition {
                    session,
                    incarnation,
                    generation,
                    expected_revision,
                    quiet_input_ms,
                    settled_output_ms,
                };
                self.transaction(token, Some(condition), Origin::Delivery, steps, hold);
            }
            Request::Send { steps, origin } => self.transaction(token, None, origin, steps, None),
            Request::Watch {} => {
                let revision = self.order.revision();
                if let Some(client) = self.clients.get_mut(&token) {
                    client.mode = Mode::Watch;
                    client.pushed_revision = revision;
                }
                self.reply(token, ServerLine::Reply(Reply::Watch { revision }));
            }
            Request::Resize { cols, rows } => match self.resize(Size { cols, rows }) {
                Ok(()) => {
                    let reply = Reply::Resize {
                        revision: self.order.revision(),
                    };
                    self.reply(token, ServerLine::Reply(reply));
                }
                Err(message) => self.error(token, ErrorKind::InvalidArgument, message),
            },
            Request::Restart {} => self.restart(token),
            Request::Attach {} => {
                let revision = self.order.revision();
                let redraw = self.screen.redraw();
                self.reply(token, ServerLine::Reply(Reply::Attach { revision }));
                let ended = (!matches!(self.child.state, ChildState::Running { .. }))
                    .then(|| serde_json::to_vec(&self.child.state).unwrap_or_default());
                if let Some(client) = self.clients.get_mut(&token) {
                    client.mode = Mode::Attach;
                    push_frame(&mut client.outbuf, FrameKind::Data, &redraw);
                    if let Some(payload) = ended {
                        push_frame(&mut client.outbuf, FrameKind::Exit, &payload);
                    }
                }
            }
        }
    }

    pub(super) fn transaction(
        &mut self,
        token: Token,
        condition: Option<Condition>,
        origin: Origin,
        steps: Vec<WireStep>,
        hold: Option<HoldAsk>,
    ) {
        let bytes = match transport::validate(&steps) {
            Ok(bytes) => bytes,
            Err(err) => {
                self.error(token, ErrorKind::InvalidTransport, err.to_string());
                return;
            }
        };
        if self.pending_input() + bytes > MAX_PENDING_INPUT {
            self.error(
                token,
                ErrorKind::Busy,
                "too much input is queued for the terminal; nothing was written".into(),
            );
            return;
        }
        self.drive(Some(Input::Transaction(Transaction {
            client: Client(token.0),
            condition,
            origin,
            steps,
            hold,
        })));
    }

    pub(super) fn restart(&mut self, token: Token) {
        if !self.order.is_idle() || self.restart_waiter.is_some() {
            let message = "input is in flight; restart after it lands".into();
            self.error(token, ErrorKind::Busy, message);
            return;
        }
        self.exit_at = None;
        if matches!(self.child.state, ChildState::Running { .. }) {
            self.restart_waiter = Some(token);
            self.log(json!({
                "event": "intervention",
                "op": "restart",
                "pid": self.child.pid.as_raw(),
            }));
            let _ = killpg(self.child.pid, Signal::SIGHUP);
            self.restart_kill_at = Some(Instant::now() + RESTART_KILL_AFTER);
        } else {
            self.restart_now(token);
        }
    }

    pub(super) fn status(&self) -> HostStatus {
        HostStatus {
            session: self.session.clone(),
            incarnation: self.child.incarnation.clone(),
            generation: self.generation.clone(),
            revision: self.order.revision(),
            child: self.child.state,
            size: self.size,
            bracketed_paste: self.screen.bracketed_paste(),
            attached: self
                .clients
                .values()
                .filter(|c| c.mode == Mode::Attach)
                .count(),
            restarting: self.restart_waiter.is_some(),
            child_for_ms: u64::try_from(self.child.since.elapsed().as_millis()).unwrap_or(u64::MAX),
            launch: self.launch.clone(),
            log_failure: self.log.failing().cloned(),
            clock_ms: self.clock_ms(Instant::now()),
            terminal: self.order.terminal(),
        }
    }

    /// `at` on the host's own clock.
    pub(super) fn clock_ms(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.clock).as_millis()).unwrap_or(u64::MAX)
    }

    /// The snapshot reply line for the current revision. A revision names
    /// one screen state (every change of the screen moves it), so the line is
    /// built once per revision however many clients ask.
    fn snapshot_line(&mut self) -> std::rc::Rc<[u8]> {
        if let Some((revision, line)) = &self.snapshot_cache
            && *revision == self.order.revision()
        {
            return line.clone();
        }
        let mut snapshot = self.screen.snapshot(self.order.revision());
        snapshot.terminal = self.order.terminal();
        snapshot.clock_ms = Some(self.clock_ms(Instant::now()));
        // Serializing our own wire types cannot fail (see `send_line`).
        let mut line =
            serde_json::to_vec(&ServerLine::Reply(Reply::Snapshot(snapshot))).unwrap_or_default();
        line.push(b'\n');
        let line: std::rc::Rc<[u8]> = line.into();
        self.snapshot_cache = Some((self.order.revision(), line.clone()));
        line
    }

    pub(super) fn reply(&mut self, token: Token, line: ServerLine) {
        if let Some(client) = self.clients.get_mut(&token) {
            client.send_line(&line);
        }
    }

    pub(super) fn error(&mut self, token: Token, error: ErrorKind, message: String) {
        self.reply(token, ServerLine::Error(ErrorReply { error, message }));
    }
}

/// An over-long request line gets one error reply, and the connection
/// closes once it is written: the rest of the line cannot be trusted.
fn refuse_oversized(client: &mut Connection) {
    client.closing = true;
    client.send_line(&ServerLine::Error(ErrorReply {
        error: ErrorKind::OversizedRequest,
        message: format!("request line is longer than {MAX_REQUEST_LINE} bytes"),
    }));
}
