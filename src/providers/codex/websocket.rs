//! A WebSocket client (RFC 6455) over a Unix stream, as much of it as
//! Codex's `app-server --listen unix://PATH` needs: the upgrade handshake,
//! masked client frames, unmasked server frames, fragments, ping/pong and
//! close. Text messages only; each is one JSON value.
//!
//! The server is Codex's own app-server, started by the launcher on a 0600
//! socket in the agent's 0700 runtime directory, so the handshake's
//! `Sec-WebSocket-Accept` (a SHA-1 this crate does not carry) is not
//! checked: nobody else can answer on that socket.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The largest message accepted (a `hooks/list` answer is a few KiB; a
/// turn's notifications are small): a bigger one ends the connection.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

const TEXT: u8 = 0x1;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// The sending half; shared, because the reader answers pings.
#[derive(Clone)]
pub struct Sender {
    inner: Arc<Mutex<(UnixStream, File)>>,
}

/// The receiving half.
pub struct Receiver {
    stream: BufReader<UnixStream>,
    sender: Sender,
}

/// Connects to `path` and upgrades the connection to a WebSocket.
pub fn connect(path: &Path) -> io::Result<(Sender, Receiver)> {
    let stream = UnixStream::connect(path)?;
    let random = File::open("/dev/urandom")?;
    let mut key = [0u8; 16];
    (&random).read_exact(&mut key)?;
    let request = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {}\r\nSec-WebSocket-Version: 13\r\n\r\n",
        base64(&key)
    );
    (&stream).write_all(request.as_bytes())?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut status = String::new();
    reader.read_line(&mut status)?;
    if !status.starts_with("HTTP/1.1 101") {
        return Err(io::Error::other(format!(
            "no WebSocket upgrade: {}",
            status.trim()
        )));
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if header == "\r\n" || header == "\n" {
            break;
        }
    }
    let sender = Sender {
        inner: Arc::new(Mutex::new((stream, random))),
    };
    let receiver = Receiver {
        stream: reader,
        sender: sender.clone(),
    };
    Ok((sender, receiver))
}

impl Sender {
    /// Sends one text message.
    pub fn send_text(&self, text: &str) -> io::Result<()> {
        self.send(TEXT, text.as_bytes())
    }

    /// Ends the connection for both halves.
    pub fn shutdown(&self) {
        if let Ok(inner) = self.inner.lock() {
            let _ = inner.0.shutdown(std::net::Shutdown::Both);
        }
    }

    fn send(&self, opcode: u8, payload: &[u8]) -> io::Result<()> {
        let mut inner = self
            .inner
            .lock()
            .map_err(|_| io::Error::other("the sender was poisoned"))?;
        let mut mask = [0u8; 4];
        (&inner.1).read_exact(&mut mask)?;
        let frame = frame(opcode, payload, mask);
        inner.0.write_all(&frame)
    }
}

/// One client frame: final, masked with `mask`.
pub fn frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 14);
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= usize::from(u16::MAX) => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(
        payload
            .iter()
            .enumerate()
            .map(|(index, byte)| byte ^ mask[index % 4]),
    );
    out
}

impl Receiver {
    /// The next text message; pings are answered on the way. A close frame
    /// or the end of the stream is `UnexpectedEof`.
    pub fn next_text(&mut self) -> io::Result<String> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.stream.read_exact(&mut head)?;
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0F);
            let length = match head[1] & 0x7F {
                126 => {
                    let mut bytes = [0u8; 2];
                    self.stream.read_exact(&mut bytes)?;
                    u64::from(u16::from_be_bytes(bytes))
                }
                127 => {
                    let mut bytes = [0u8; 8];
                    self.stream.read_exact(&mut bytes)?;
                    u64::from_be_bytes(bytes)
                }
                n => u64::from(n),
            };
            let length = usize::try_from(length)
                .ok()
                .filter(|n| message.len() + n <= MAX_MESSAGE_BYTES)
                .ok_or_else(|| io::Error::other("a WebSocket message over the size bound"))?;
            let mask = if head[1] & 0x80 != 0 {
                let mut mask = [0u8; 4];
                self.stream.read_exact(&mut mask)?;
                Some(mask)
            } else {
                None
            };
            let mut payload = vec![0u8; length];
            self.stream.read_exact(&mut payload)?;
            if let Some(mask) = mask {
                for (index, byte) in payload.iter_mut().enumerate() {
                    *byte ^= mask[index % 4];
                }
            }
            match opcode {
                PING => self.sender.send(PONG, &payload)?,
                PONG => {}
                CLOSE => return Err(io::ErrorKind::UnexpectedEof.into()),
                _ => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message)
                            .map_err(|_| io::Error::other("a WebSocket text that is not UTF-8"));
                    }
                }
            }
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (index, byte)| {
            n | u32::from(*byte) << (16 - 8 * index)
        });
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * index) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;
    use std::thread;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn client_frames_are_masked_with_the_right_length_encoding() {
        let mask = [1, 2, 3, 4];
        let short = frame(TEXT, b"hi", mask);
        assert_eq!(short, [0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2]);
        let medium = frame(TEXT, &[0; 300], mask);
        assert_eq!(&medium[..4], &[0x81, 0x80 | 126, 1, 44]);
        let long = frame(TEXT, &vec![0; 70_000], mask);
        assert_eq!(
            &long[..10],
            &[0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]
        );
    }

    /// A server that upgrades, sends a ping, a fragmented text and a close,
    /// and hands back what the client sent.
    #[test]
    fn a_client_upgrades_answers_pings_and_reads_fragmented_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ws.sock");
        let listener = UnixListener::bind(&path).expect("bind");
        let server = thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut request = String::new();
            while !request.ends_with("\r\n\r\n") {
                reader.read_line(&mut request).expect("request");
            }
            assert!(request.contains("Sec-WebSocket-Key: "), "{request}");
            stream
                .write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
                .expect("upgrade");
            stream.write_all(&[0x89, 2, b'p', b'!']).expect("ping");
            stream
                .write_all(&[0x01, 3, b'{', b'"', b'a'])
                .expect("first");
            stream
                .write_all(&[0x80, 4, b'"', b':', b'1', b'}'])
                .expect("last");
            // The client's pong, then its text, both masked.
            let mut pong = [0u8; 8];
            reader.read_exact(&mut pong).expect("pong");
            assert_eq!(pong[0], 0x8A);
            let mut head = [0u8; 6];
            reader.read_exact(&mut head).expect("text head");
            let mut body = vec![0u8; usize::from(head[1] & 0x7F)];
            reader.read_exact(&mut body).expect("text body");
            for (index, byte) in body.iter_mut().enumerate() {
                *byte ^= head[2 + index % 4];
            }
            stream.write_all(&[0x88, 0]).expect("close");
            String::from_utf8(body).expect("utf-8")
        });
        let (sender, mut receiver) = connect(&path).expect("connect");
        assert_eq!(receiver.next_text().expect("text"), "{\"a\":1}");
        sender.send_text("{\"id\":1}").expect("send");
        assert_eq!(
            receiver.next_text().expect_err("closed").kind(),
            io::ErrorKind::UnexpectedEof
        );
        assert_eq!(server.join().expect("server"), "{\"id\":1}");
    }
}
