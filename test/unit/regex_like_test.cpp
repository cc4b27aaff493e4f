// SimpleRegexAsLike (src/core/regex_like.h): the LIKE pattern of a simple
// regular expression, and refusal of everything else.
#include "regex_like.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string Like(const std::string& regex) {
  std::string like;
  EXPECT_TRUE(dp::SimpleRegexAsLike(regex.data(), regex.size(), &like)) << regex;
  return like;
}

bool Translates(const std::string& regex) {
  std::string like;
  return dp::SimpleRegexAsLike(regex.data(), regex.size(), &like);
}

TEST(SimpleRegexAsLike, AnchorsAndWildcards) {
  EXPECT_EQ(Like("^north"), "north%");
  EXPECT_EQ(Like("ill$"), "%ill");
  EXPECT_EQ(Like("^exact$"), "exact");
  EXPECT_EQ(Like("mid"), "%mid%");
  EXPECT_EQ(Like("^a.c$"), "a_c");
  EXPECT_EQ(Like("^x.*y$"), "x%y");
  EXPECT_EQ(Like(".*a.*"), "%a%");  // runs of % collapse
  EXPECT_EQ(Like(""), "%");
  EXPECT_EQ(Like("^"), "%");
  EXPECT_EQ(Like("$"), "%");
  EXPECT_EQ(Like("^$"), "");
}

TEST(SimpleRegexAsLike, LiteralsAndEscapes) {
  EXPECT_EQ(Like("^50%"), "50\\%%");  // LIKE's own wildcards are escaped
  EXPECT_EQ(Like("^a_b$"), "a\\_b");
  EXPECT_EQ(Like("^a\\.b$"), "a.b");  // \. is a literal dot
  EXPECT_EQ(Like("\\$$"), "%$");  // an escaped dollar, then the anchor
  EXPECT_EQ(Like("^\\\\$"), "\\\\");  // one literal backslash
  EXPECT_EQ(Like("\\%"), "%\\%%");  // an escaped % ends with a literal %, then %
  EXPECT_EQ(Like("^caf\xc3\xa9$"), "caf\xc3\xa9");  // multibyte characters are literals
  EXPECT_EQ(Like("^a b-c#d$"), "a b-c#d");
}

TEST(SimpleRegexAsLike, RefusesEverythingElse) {
  for (const char* regex : {"a|b", "(a)", "a+", "a?", "a*", "[ab]", "a{2}", "\\d", "\\w+", "\\1",
                            "\\m", "***=a", "(?i)a", "^a\\", "a^b", "a$b", "]", "}"})
    EXPECT_FALSE(Translates(regex)) << regex;
  const std::string with_nul("a\0b", 3);
  EXPECT_FALSE(Translates(with_nul));
}

}  // namespace
