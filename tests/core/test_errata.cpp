// The errata data (core/pseudocode/errata): every seed's slips are there, complete, and each
// points at pseudocode lines that exist.
#include <gtest/gtest.h>

#include <set>

#include "core/pseudocode/errata.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace test_errata {

namespace {

using sf::errata;

TEST(Errata, EveryEntryIsCompleteAndItsTargetsArePseudocodeLines) {
  ASSERT_GE(errata().size(), 12u);
  std::set<std::string> ids;
  for (const sf::Erratum& e : errata()) {
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate id " << e.id;
    for (const std::string* field : {&e.where, &e.printed, &e.problem, &e.stepformer})
      EXPECT_FALSE(field->empty()) << e.id;
    ASSERT_FALSE(e.show.empty()) << e.id << " has nowhere to show";
    for (const sf::ErratumTarget& t : e.show) {
      const sf::PseudoLine* line = sf::pseudocode_line(t.alg, t.line);
      EXPECT_NE(line, nullptr) << e.id << ": Algorithm " << t.alg << " has no line " << t.line;
    }
    EXPECT_EQ(sf::find_erratum(e.id), &e);
  }
  EXPECT_EQ(sf::find_erratum("no-such-erratum"), nullptr);
}

TEST(Errata, ThePapersSlipsAreListedWhereThePaperPrintsThem) {
  struct Expect {
    const char* id;
    int alg, line;
    const char* quote;  // a piece of the printed line, as core/pseudocode transcribes it
  };
  for (const Expect& x : {Expect{"paper-layer-norm-eps", 6, 3, "√v"}, Expect{"paper-alg8-loop-index", 8, 13, "for i"},
                          Expect{"paper-alg9-wu-shape", 9, 12, "W_u X"},
                          Expect{"paper-alg15-unbounded", 15, 3, "while y ≠ eos_token"},
                          Expect{"paper-tau-zero", 14, 5, "p^{1/τ}"}}) {
    const sf::Erratum* e = sf::find_erratum(x.id);
    ASSERT_NE(e, nullptr) << x.id;
    EXPECT_EQ(e->kind, sf::ErratumKind::Slip) << x.id;
    EXPECT_EQ(e->show.front().alg, x.alg) << x.id;
    EXPECT_EQ(e->show.front().line, x.line) << x.id;
    // The quote is on the paper's line itself, and in what the erratum says is printed.
    const sf::PseudoLine* line = sf::pseudocode_line(x.alg, x.line);
    ASSERT_NE(line, nullptr);
    EXPECT_NE(line->text.find(x.quote), std::string::npos) << x.id << ": " << line->text;
    EXPECT_NE(e->printed.find(x.quote), std::string::npos) << x.id << ": " << e->printed;
  }
  // The sinusoid's base is a departure from Vaswani et al., not a slip.
  ASSERT_NE(sf::find_erratum("paper-sinusoid-base"), nullptr);
  EXPECT_EQ(sf::find_erratum("paper-sinusoid-base")->kind, sf::ErratumKind::Departure);
}

TEST(Errata, EachSeedHasItsOwn) {
  int paper = 0, carpenter = 0, dyz = 0, article = 0;
  for (const sf::Erratum& e : errata()) {
    paper += e.seed == sf::Seed::Paper;
    carpenter += e.seed == sf::Seed::Carpenter;
    dyz += e.seed == sf::Seed::DinanYaidaZhang;
    article += e.seed == sf::Seed::Article;
  }
  EXPECT_EQ(paper, 6);
  EXPECT_GE(carpenter, 6);
  EXPECT_GE(dyz, 2);
  EXPECT_GE(article, 1);
  EXPECT_EQ(paper + carpenter + dyz + article, static_cast<int>(errata().size()));
  EXPECT_STREQ(sf::to_string(sf::Seed::Carpenter), "Carpenter 2023 (seed 002)");
  // Carpenter's three listing slips the reference names: history vs history_toks, the reversed
  // pop condition, z used where w was computed.
  EXPECT_NE(sf::find_erratum("carpenter-history-names")->printed.find("history_toks"), std::string::npos);
  EXPECT_NE(sf::find_erratum("carpenter-pop-reversed")->printed.find("< MAX_HISTORY"), std::string::npos);
  EXPECT_NE(sf::find_erratum("carpenter-z-for-w")->printed.find("x[n, 1:V] + z[1:V]"), std::string::npos);
}

}  // namespace

}  // namespace test_errata
