//! Gemini CLI (0.61.0): the Gemini API's `generateContent` for the
//! loopback model server. The findings it rests on are in
//! docs/providers/gemini-findings.md and fixtures/providers/gemini/.

pub mod generate_content;
