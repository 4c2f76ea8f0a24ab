# Sourced by fuzz/run.sh and fuzz/device_run.sh: the fuzz targets and each one's limits, in one place.
#
# Memory ("no allocation beyond 2× the file size plus the model", docs/hardening.md): each target gets a
# longest input (-max_len) and a largest single allocation (-malloc_limit_mb) of 2 × max_len plus the
# largest model that input can make or open, rounded up to whole MiB; -rss_limit_mb bounds the process.
# shellcheck shell=bash disable=SC2034

FUZZ_TARGETS=(fuzz_checkpoint fuzz_safetensors fuzz_ecosystem fuzz_hf_config fuzz_tokenizer_gpt2
              fuzz_tokenizer_wordpiece fuzz_tokenizer_json fuzz_session fuzz_npy fuzz_actions fuzz_meta_pkl
              fuzz_vocab_txt)

# The longest time one input may take (-timeout, seconds) and the sanitizers' settings: a leak or any
# UBSan report is a finding.
FUZZ_TIMEOUT=10
FUZZ_ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
FUZZ_UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# target → "max_len malloc_limit_mb rss_limit_mb"
limits() {
  case $1 in
    # A checkpoint is its own model: 2 × 64 KiB + 64 KiB < 1 MiB.
    fuzz_checkpoint|fuzz_safetensors|fuzz_npy) echo "65536 1 512" ;;
    # config.json + model.safetensors (≤ 64 KiB together) and the test data's tokenizer files (< 8 KiB).
    fuzz_ecosystem) echo "65536 1 512" ;;
    # Text files of ≤ 16 KiB: no model.
    fuzz_hf_config|fuzz_tokenizer_gpt2|fuzz_tokenizer_wordpiece|fuzz_tokenizer_json|fuzz_session) echo "16384 1 512" ;;
    # meta.pkl (≤ 16 KiB; nanoGPT's character meta.pkl is 0.4–0.6 KiB): no model. Its pickle machine keeps at
    # most one 48-byte object per 2 bytes (≤ 8208 objects, 394 KB; the vector's capacity ≤ 16384 × 48 =
    # 786 KB) and copies out at most the file's bytes: < 1 MiB for the largest single allocation.
    # vocab.txt (≤ 16 KiB, a token list): its lines and the tokenizer's map, < 1 MiB.
    fuzz_meta_pkl|fuzz_vocab_txt) echo "16384 1 512" ;;
    # A script of ≤ 4 KiB on the bundled models (the largest, assets/ed.safetensors, is 2.9 MB). Its largest
    # single allocation is a trace's event vector: a traced generation with FlashAttention's blocks at this
    # target's smallest, 4×4, over ℓ_max = 64 tokens grows it to 27.3 MB (measured, session 19: the prompt at
    # 46 tokens, gen:16, generate-all), so 32 MiB; its peak RSS under ASan was 0.5 GB.
    fuzz_actions) echo "4096 32 1024" ;;
    *) echo "unknown fuzz target $1" >&2; return 1 ;;
  esac
}
