// One error type for every refusal core makes (bad file, bad config, bad input):
// its what() is a complete sentence for the user.
#pragma once
#include <stdexcept>
#include <string>

namespace sf {
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace sf
