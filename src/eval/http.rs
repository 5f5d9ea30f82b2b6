//! A small HTTP/1.1 server for loopback test peers: requests in, JSON or
//! server-sent events out, one thread per connection.
//!
//! It is deliberately minimal: the only clients are programs under test on
//! the same machine, so it binds `127.0.0.1` only, reads a request's body by
//! `Content-Length` or chunked encoding (after a `100 Continue` if the
//! client expects one), keeps connections alive, and writes
//! every response chunked (a JSON body is one chunk, each event another), so
//! a streamed reply needs no length up front and the connection survives
//! it. It knows nothing about what the bodies mean; a [`Handler`] does.
//!
//! Bounds: a request head of at most 64 KiB and a body of at most 64 MiB;
//! anything larger, or malformed, gets `400` and the connection is closed.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;

use anyhow::{Context, Result, bail};

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target as sent: path and optional `?query`.
    pub target: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target
            .split_once('?')
            .map_or(&self.target, |(path, _)| path)
    }

    /// The query string after `?`, if any.
    pub fn query(&self) -> Option<&str> {
        self.target.split_once('?').map(|(_, query)| query)
    }

    /// The first header called `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What answers requests. Called on the connection's own thread.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, request: &Request, response: Response<'_>) -> io::Result<()>;
}

/// The one response to a request; consumed by answering it.
pub struct Response<'a> {
    stream: &'a mut TcpStream,
}

impl<'a> Response<'a> {
    /// A complete JSON (or any `content_type`) body.
    pub fn body(self, status: u16, content_type: &str, body: &[u8]) -> io::Result<()> {
        write_head(self.stream, status, content_type)?;
        write_chunk(self.stream, body)?;
        finish(self.stream)
    }

    /// Starts an event stream; the reply ends when the [`EventStream`] is
    /// finished or dropped.
    pub fn events(self) -> io::Result<EventStream<'a>> {
        write_head(self.stream, 200, "text/event-stream")?;
        Ok(EventStream {
            stream: self.stream,
            finished: false,
        })
    }
}

/// An open `text/event-stream` reply.
pub struct EventStream<'a> {
    stream: &'a mut TcpStream,
    finished: bool,
}

impl EventStream<'_> {
    /// Sends one event (`event: NAME`, `data: DATA`; no `event:` line for
    /// an empty name) and flushes it, so the client sees it now, not when
    /// the reply ends.
    pub fn send(&mut self, name: &str, data: &str) -> io::Result<()> {
        let mut event = if name.is_empty() {
            String::new()
        } else {
            format!("event: {name}\n")
        };
        for line in data.split('\n') {
            event.push_str("data: ");
            event.push_str(line);
            event.push('\n');
        }
        event.push('\n');
        write_chunk(self.stream, event.as_bytes())
    }

    /// Ends the reply; the connection stays open for the next request.
    pub fn finish(mut self) -> io::Result<()> {
        self.finished = true;
        finish(self.stream)
    }
}

impl Drop for EventStream<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = finish(self.stream);
        }
    }
}

/// Binds `127.0.0.1:port` (0 picks a free port).
pub fn bind_loopback(port: u16) -> Result<TcpListener> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpListener::bind(address).with_context(|| format!("bind {address}"))
}

/// Accepts connections forever, each served on its own thread by `handler`.
pub fn serve(listener: TcpListener, handler: Arc<dyn Handler>) -> Result<()> {
    loop {
        let (stream, _) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err).context("accept a connection"),
        };
        let handler = Arc::clone(&handler);
        thread::spawn(move || serve_connection(stream, handler.as_ref()));
    }
}

/// Serves requests on one connection until the peer closes it or sends
/// something malformed (answered with `400`).
fn serve_connection(mut stream: TcpStream, handler: &dyn Handler) {
    let _ = stream.set_nodelay(true);
    let Ok(reading) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    loop {
        match read_request(&mut reader, &mut stream) {
            Ok(Some(request)) => {
                if handler
                    .handle(
                        &request,
                        Response {
                            stream: &mut stream,
                        },
                    )
                    .is_err()
                {
                    return;
                }
            }
            Ok(None) => return,
            Err(err) => {
                let text = format!("bad request: {err:#}\n");
                let _ = Response {
                    stream: &mut stream,
                }
                .body(400, "text/plain", text.as_bytes());
                return;
            }
        }
    }
}

/// Reads one request; `None` on a clean end of stream before it starts. A
/// client that sent `Expect: 100-continue` is told to go on through
/// `interim` before its body is read.
pub fn read_request(
    reader: &mut impl BufRead,
    interim: &mut impl Write,
) -> Result<Option<Request>> {
    let mut head_bytes = 0;
    let Some(request_line) = read_line(reader, &mut head_bytes)? else {
        return Ok(None);
    };
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        bail!("malformed request line {request_line:?}");
    };
    if !version.starts_with("HTTP/1.") {
        bail!("unsupported version {version:?}");
    }
    let mut request = Request {
        method: method.to_string(),
        target: target.to_string(),
        ..Request::default()
    };
    loop {
        let line = read_line(reader, &mut head_bytes)?.context("end of stream in the head")?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .with_context(|| format!("malformed header {line:?}"))?;
        request
            .headers
            .push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    if request
        .header("expect")
        .is_some_and(|value| value.eq_ignore_ascii_case("100-continue"))
    {
        interim
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .context("write 100 Continue")?;
    }
    request.body = read_body(reader, &request)?;
    Ok(Some(request))
}

fn read_line(reader: &mut impl BufRead, head_bytes: &mut usize) -> Result<Option<String>> {
    let mut line = Vec::new();
    let limit = (MAX_HEAD - *head_bytes) as u64 + 1;
    let read = reader.take(limit).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    *head_bytes += read;
    if *head_bytes > MAX_HEAD || !line.ends_with(b"\n") {
        bail!("request head longer than {MAX_HEAD} bytes or cut off");
    }
    let text = String::from_utf8(line).context("request head is not UTF-8")?;
    Ok(Some(text.trim_end_matches(['\r', '\n']).to_string()))
}

fn read_body(reader: &mut impl BufRead, request: &Request) -> Result<Vec<u8>> {
    if request
        .header("transfer-encoding")
        .is_some_and(|value| value.eq_ignore_ascii_case("chunked"))
    {
        return read_chunked(reader);
    }
    let length = match request.header("content-length") {
        Some(value) => value
            .parse::<usize>()
            .with_context(|| format!("bad content-length {value:?}"))?,
        None => 0,
    };
    if length > MAX_BODY {
        bail!("body of {length} bytes is over {MAX_BODY}");
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).context("body cut off")?;
    Ok(body)
}

fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut head_bytes = 0;
        let size_line = read_line(reader, &mut head_bytes)?.context("chunk size cut off")?;
        let size_text = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .with_context(|| format!("bad chunk size {size_line:?}"))?;
        if size == 0 {
            // Trailers, if any, end with an empty line.
            while !read_line(reader, &mut head_bytes)?
                .context("trailers cut off")?
                .is_empty()
            {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            bail!("chunked body over {MAX_BODY} bytes");
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(&mut body[start..])
            .context("chunk cut off")?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf).context("chunk end cut off")?;
        if crlf != *b"\r\n" {
            bail!("chunk not followed by CRLF");
        }
    }
}

fn write_head(stream: &mut TcpStream, status: u16, content_type: &str) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Status",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes())
}

fn write_chunk(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
    chunk.extend_from_slice(bytes);
    chunk.extend_from_slice(b"\r\n");
    stream.write_all(&chunk)?;
    stream.flush()
}

fn finish(stream: &mut TcpStream) -> io::Result<()> {
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Option<Request>> {
        read_request(&mut BufReader::new(bytes), &mut io::sink())
    }

    #[test]
    fn a_request_with_a_length_keeps_target_headers_and_body() {
        let request =
            parse(b"POST /v1/x?beta=true HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
                .expect("parses")
                .expect("a request");
        assert_eq!(request.method, "POST");
        assert_eq!(request.path(), "/v1/x");
        assert_eq!(request.query(), Some("beta=true"));
        assert_eq!(request.header("host"), Some("a"));
        assert_eq!(request.body, b"hello");
    }

    #[test]
    fn a_chunked_body_is_joined() {
        let request = parse(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        )
        .expect("parses")
        .expect("a request");
        assert_eq!(request.body, b"abcde");
    }

    #[test]
    fn a_client_expecting_100_continue_is_told_to_go_on() {
        let read = |bytes: &[u8]| {
            let mut interim = Vec::new();
            let request = read_request(&mut BufReader::new(bytes), &mut interim)
                .expect("parses")
                .expect("a request");
            (request.body, interim)
        };
        let (body, interim) =
            read(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
        assert_eq!(body, b"x");
        assert_eq!(interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        let (_, interim) = read(b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        assert!(interim.is_empty());
    }

    #[test]
    fn end_of_stream_before_a_request_is_none_and_inside_one_is_an_error() {
        assert_eq!(parse(b"").expect("clean end"), None);
        assert!(parse(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc").is_err());
        assert!(parse(b"POST / HTTP/1.1\r\nHost").is_err());
    }

    #[test]
    fn malformed_or_oversized_heads_are_refused() {
        assert!(parse(b"GARBAGE\r\n\r\n").is_err());
        assert!(parse(b"GET / SPDY/3\r\n\r\n").is_err());
        assert!(parse(b"GET / HTTP/1.1\r\nno colon\r\n\r\n").is_err());
        assert!(parse(b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n").is_err());
        let mut huge = b"GET / HTTP/1.1\r\nX: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', MAX_HEAD));
        huge.extend_from_slice(b"\r\n\r\n");
        assert!(parse(&huge).is_err());
        let too_long = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert!(parse(too_long.as_bytes()).is_err());
    }

    struct Echo;
    impl Handler for Echo {
        fn handle(&self, request: &Request, response: Response<'_>) -> io::Result<()> {
            if request.path() == "/events" {
                let mut events = response.events()?;
                events.send("one", "{\"a\":1}")?;
                events.send("two", "x\ny")?;
                events.send("", "{\"b\":2}")?;
                events.finish()
            } else {
                response.body(200, "application/json", &request.body)
            }
        }
    }

    #[test]
    fn a_connection_serves_a_body_then_events_on_the_same_socket() {
        let listener = bind_loopback(0).expect("bind");
        let address = listener.local_addr().expect("address");
        assert!(address.ip().is_loopback());
        thread::spawn(move || serve(listener, Arc::new(Echo)));
        let mut client = TcpStream::connect(address).expect("connect");
        client
            .write_all(
                b"POST /json HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}GET /events HTTP/1.1\r\n\r\n",
            )
            .expect("write");
        let mut reader = BufReader::new(client);
        let mut text = String::new();
        while !text.ends_with("0\r\n\r\n") || !text.contains("{\"b\":2}") {
            let mut line = String::new();
            assert!(reader.read_line(&mut line).expect("read") > 0, "{text}");
            text.push_str(&line);
        }
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("\r\n2\r\n{}\r\n0\r\n\r\n"), "{text}");
        assert!(text.contains("content-type: text/event-stream"), "{text}");
        assert!(text.contains("event: one\ndata: {\"a\":1}\n\n"), "{text}");
        assert!(text.contains("event: two\ndata: x\ndata: y\n\n"), "{text}");
        // A nameless event is its data line alone, right after the last.
        assert!(
            text.contains("data: y\n\n\r\n") && text.contains("\r\ndata: {\"b\":2}\n\n"),
            "{text}"
        );
    }

    #[test]
    fn a_malformed_request_gets_400_and_the_server_keeps_serving() {
        let listener = bind_loopback(0).expect("bind");
        let address = listener.local_addr().expect("address");
        thread::spawn(move || serve(listener, Arc::new(Echo)));
        let mut bad = TcpStream::connect(address).expect("connect");
        bad.write_all(b"NONSENSE\r\n\r\n").expect("write");
        let mut reply = String::new();
        bad.read_to_string(&mut reply).expect("read until closed");
        assert!(reply.starts_with("HTTP/1.1 400 "), "{reply}");
        let mut good = TcpStream::connect(address).expect("connect again");
        good.write_all(b"POST /json HTTP/1.1\r\nContent-Length: 2\r\n\r\nok")
            .expect("write");
        let mut reader = BufReader::new(good);
        let mut status = String::new();
        reader.read_line(&mut status).expect("read");
        assert_eq!(status, "HTTP/1.1 200 OK\r\n");
    }
}
