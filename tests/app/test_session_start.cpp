// A Session started from a model already open (Session(const SessionStart&), default_start(),
// open_start()): the same state as Session(), and Sessions that share one opened model stay
// independent. fuzz/fuzz_actions.cpp starts one Session per input this way.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app/session.hpp"
#include "core/model/error.hpp"

namespace test_session_start {

using namespace sf;

namespace {

// Every event of `a` and `b` at the same line with the same indices and bit-identical values: the
// same code on the same model and prompt, one thread, so no tolerance.
void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    const Event& x = a.events[k];
    const Event& y = b.events[k];
    ASSERT_EQ(x.ref(), y.ref()) << "event " << k;
    ASSERT_EQ(x.values.size(), y.values.size()) << "event " << k;
    for (size_t j = 0; j < x.values.size(); ++j) {
      const Value& u = x.values[j];
      const Value& v = y.values[j];
      EXPECT_EQ(u.name, v.name);
      EXPECT_EQ(u.tokens, v.tokens);
      ASSERT_EQ(u.m.rows(), v.m.rows());
      ASSERT_EQ(u.m.cols(), v.m.cols());
      // NaN-aware: cwiseEqual would call a NaN (none expected) different from itself.
      for (Eigen::Index r = 0; r < u.m.rows(); ++r)
        for (Eigen::Index c = 0; c < u.m.cols(); ++c)
          if (!(std::isnan(u.m(r, c)) && std::isnan(v.m(r, c)))) ASSERT_EQ(u.m(r, c), v.m(r, c)) << u.name;
    }
  }
}

}  // namespace

TEST(SessionStart, FromTheOpenedDefaultIsSessionsStart) {
  const Session a;
  const SessionStart start = default_start();
  const Session b(start);
  EXPECT_EQ(b.model_label(), "default.safetensors");
  EXPECT_EQ(b.model_label(), a.model_label());
  EXPECT_EQ(b.origin().path, a.origin().path);
  EXPECT_EQ(b.origin().files, a.origin().files);
  EXPECT_EQ(b.prompt(), "hello=");
  EXPECT_EQ(b.tokens(), a.tokens());
  EXPECT_EQ(b.cursor(), a.cursor());
  EXPECT_EQ(b.current().ref(), a.current().ref());
  EXPECT_EQ(b.run_kind(), RunKind::Forward);
  EXPECT_EQ(b.model().table.total(), a.model().table.total());
  expect_same_trace(b.trace(), a.trace());
  // The opened file is a draft candidate in both, as after load_model.
  const auto ca = a.speculation().candidates(a.model());
  const auto cb = b.speculation().candidates(b.model());
  ASSERT_EQ(cb.size(), ca.size());
  for (size_t i = 0; i < ca.size(); ++i) EXPECT_EQ(cb[i].path, ca[i].path);
}

TEST(SessionStart, TracesTheForwardPassOnce) {
  // set_model already traces the default prompt: the start does not trace it a second time.
  const Session s;
  EXPECT_EQ(s.trace_serial(), 1u);
}

TEST(SessionStart, SessionsShareTheModelAndStayIndependent) {
  const SessionStart start = default_start();
  Session b(start);
  const Session c(start);
  EXPECT_EQ(b.model_ptr(), start.model);  // shared, not copied
  EXPECT_EQ(c.model_ptr(), start.model);
  const size_t serial = c.trace_serial();
  const size_t events = c.trace().size();

  b.set_prompt("abc");
  std::string error;
  ASSERT_TRUE(b.load_model(assets_dir() + "/bert.safetensors", error)) << error;
  EXPECT_EQ(b.model_label(), "bert.safetensors");

  EXPECT_EQ(c.model_ptr(), start.model);
  EXPECT_EQ(c.model_label(), "default.safetensors");
  EXPECT_EQ(c.prompt(), "hello=");
  EXPECT_EQ(c.trace_serial(), serial);
  EXPECT_EQ(c.trace().size(), events);
  const Session d(start);  // a later Session from the same start is as the first was
  expect_same_trace(d.trace(), c.trace());
}

TEST(SessionStart, OpenStartIsWhatLoadModelShows) {
  const std::string path = assets_dir() + "/ed.safetensors";
  const SessionStart st = open_start(path);
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(path, error)) << error;
  EXPECT_EQ(st.label, s.model_label());
  EXPECT_EQ(st.origin.path, s.origin().path);
  EXPECT_EQ(st.origin.files, s.origin().files);
  EXPECT_EQ(st.model->config.N_V(), s.model().config.N_V());
  const Session t(st);  // a Session can start from any opened model
  EXPECT_EQ(t.model_label(), "ed.safetensors");
  EXPECT_EQ(t.tokens_z(), s.tokens_z());
  EXPECT_TRUE(t.arch().has_context());
}

TEST(SessionStart, OpenStartOfAMissingFileThrows) {
  EXPECT_THROW(open_start(assets_dir() + "/no-such-model.safetensors"), Error);
}

}  // namespace test_session_start
