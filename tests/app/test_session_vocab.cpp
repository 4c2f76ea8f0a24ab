// A GPT-layout model without tokenizer files in the Session (issue 22): minGPT with N_V = 3 opens
// with plain ids (tests/data/vocab/mingpt-ids, written by tests/reference/gen_vocab_models.py), its
// one-line note is in the origin the Tensors panel shows, and the prompt field takes ids.
#include <gtest/gtest.h>

#include "app/session.hpp"

namespace test_session_vocab {

using namespace sf;

namespace {

std::string vocab_dir(const std::string& name) { return std::string(STEPFORMER_SOURCE_DIR) + "/tests/data/vocab/" + name; }

}  // namespace

TEST(SessionVocab, APlainIdsModelTakesIdsInThePrompt) {
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(vocab_dir("mingpt-ids"), error)) << error;
  bool said = false;
  for (const std::string& n : s.origin().notes) said |= n.find("no tokenizer files") != std::string::npos;
  EXPECT_TRUE(said);
  // The default prompt is text: refused with what to type, the trace on [bos_token] (a valid id).
  EXPECT_NE(s.prompt_input().error.find("\"hello=\" at 1 is not in the vocabulary (plain ids #1 … #3 (no tokenizer files: type ids))"),
            std::string::npos)
      << s.prompt_input().error;
  EXPECT_EQ(s.tokens(), (Tokens{2}));  // the configuration's bos_token, N_V − 1
  s.set_prompt("1 2 3");
  s.wait_for_trace();
  EXPECT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  EXPECT_EQ(s.tokens(), (Tokens{1, 2, 3}));  // the ids as typed, nothing added
  EXPECT_EQ(s.tokenizer().label(s.tokens()[2]), "#3");
  s.set_prompt("3, 1 x");
  s.wait_for_trace();
  ASSERT_EQ(s.prompt_input().unknown.size(), 1u);
  EXPECT_EQ(s.prompt_input().unknown[0].chr, "x");
  EXPECT_EQ(s.tokens(), (Tokens{1, 2, 3}));  // stale: the last prompt that could be encoded
}

TEST(SessionVocab, ACharacterModelReadsItsMetaPkl) {
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(vocab_dir("nanogpt-char"), error)) << error;
  s.set_prompt("hello");
  s.wait_for_trace();
  EXPECT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  EXPECT_EQ(s.tokens().size(), 5u);  // one token per character, nothing added
  EXPECT_EQ(s.tokenizer().decode_text(s.tokens()), "hello");
}

// Issue 24: a model whose character vocabulary lacks letters of the default prompt "hello=" (the
// encoder-decoder of tests/data/backprop, trained on a–e and "=") used to open on a vocabulary
// error and a stale trace of [bos_token]. Its default prompt is now made of its own characters; a
// prompt the learner typed is kept (with its error), and the next model gets "hello=" back.
TEST(SessionVocab, AFreshlyOpenedModelGetsADefaultPromptItsVocabularyReads) {
  const std::string ed = std::string(STEPFORMER_SOURCE_DIR) + "/tests/data/backprop/ed.safetensors";
  const std::string fallback = std::string(STEPFORMER_SOURCE_DIR) + "/tests/data/backprop/gpt.safetensors";
  Session s;
  ASSERT_EQ(s.prompt(), "hello=");
  std::string error;
  ASSERT_TRUE(s.load_model(ed, error)) << error;
  ASSERT_EQ(s.model().config.arch, "ed");
  EXPECT_EQ(s.prompt(), "abcde=");  // five letters in reading order, then the tasks' separator
  EXPECT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  EXPECT_FALSE(s.trace_stale());
  EXPECT_EQ(s.tokenizer().decode_text(s.tokens()), "abcde=");
  EXPECT_EQ(s.tokens().size(), 7u);  // [bos_token] and six characters, within ℓ_max = 8
  EXPECT_EQ(s.tokens_z().size(), 2u);  // the empty context z: [bos_token, eos_token]
  // A typed prompt stays, refused with what to fix, when the next model cannot read it.
  s.set_prompt("abx");
  s.wait_for_trace();
  ASSERT_TRUE(s.load_model(fallback, error)) << error;
  EXPECT_EQ(s.prompt(), "abx");
  EXPECT_NE(s.prompt_input().error.find("\"x\" at 3 is not in the vocabulary"), std::string::npos) << s.prompt_input().error;
  // The default model reads "hello=": a prompt nobody typed goes back to it.
  Session fresh;
  ASSERT_TRUE(fresh.load_model(ed, error)) << error;
  ASSERT_TRUE(fresh.load_model(std::string(STEPFORMER_SOURCE_DIR) + "/assets/default.safetensors", error)) << error;
  EXPECT_EQ(fresh.prompt(), "hello=");
  EXPECT_TRUE(fresh.prompt_input().error.empty()) << fresh.prompt_input().error;
}

}  // namespace test_session_vocab
