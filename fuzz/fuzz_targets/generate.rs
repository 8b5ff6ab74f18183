//! `robots generate` over arbitrary base files: the result is checked by
//! the engine inside `generate`, so the only acceptable failures are a
//! result over the size limit; a failed check (`Check`) is a merge that
//! changed a kept crawler's verdict or left a blocked one in, and never a
//! panic.
#![no_main]

use std::sync::OnceLock;

use botscope_botid::{Category, GenerateError, Policy, Registry, generate};
use libfuzzer_sys::fuzz_target;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| {
        Registry::parse(
            "fuzz",
            "bots:\n\
             - name: Googlebot\n  category: search\n  ua_tokens: [Googlebot]\n\
             - name: GPTBot\n  category: ai-training\n  ua_tokens: [GPTBot]\n\
             - name: CCBot\n  category: ai-training\n  ua_tokens: [CCBot, 'CCBot/2.0']\n\
             - name: AI2Bot\n  category: ai-training\n  ua_tokens: [AI2Bot]\n\
             - name: ChatGPT-User\n  category: ai-assistant\n  ua_tokens: [ChatGPT-User]\n",
        )
        .expect("the fuzz registry")
    })
}

fuzz_target!(|data: &[u8]| {
    let policy = Policy {
        block: vec![Category::AiTraining],
        block_bots: vec!["Bytespider".into()],
        ..Policy::default()
    };
    match generate(registry(), &policy, Some(data)) {
        Ok(g) => assert!(g.text.len() <= botscope_botid::MAX_GENERATED),
        Err(GenerateError::TooLarge(_)) => {}
        Err(e) => panic!("{e}"),
    }
});
