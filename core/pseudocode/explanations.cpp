#include "core/pseudocode/explanations.hpp"

#include <map>
#include <utility>

#include "core/pseudocode/flash_listing.hpp"
#include "core/pseudocode/speculative_listing.hpp"
#include "core/pseudocode/rfa_listing.hpp"

namespace sf {

const char* explain_line(int alg, int line) {
  static const std::map<std::pair<int, int>, const char*> text{
      // Algorithm 1: Token embedding
      {{1, 1}, "Look up the token's vector: column v of the embedding matrix W_e. Every token of the vocabulary has "
               "its own learned column of d_e numbers."},
      // Algorithm 2: Positional embedding
      {{2, 1}, "Look up the position's vector: column ℓ of W_p. It tells the model where in the sequence a token "
               "sits, because attention by itself ignores the order of the tokens."},
      // Algorithm 3: Basic single-query attention
      {{3, 1}, "Turn the current token's vector e into a query q: what this token is looking for."},
      {{3, 2}, "Turn each context token's vector e_t into a key k_t: what that token offers to be matched against."},
      {{3, 3}, "Turn each context token's vector into a value v_t: the information it passes on when it is attended "
               "to."},
      {{3, 4}, "Score each context token by the dot product of the query with its key, divided by √d_attn, and turn "
               "the scores into weights α_t with a softmax: they are positive and add up to 1."},
      {{3, 5}, "Return the weighted average of the values: the tokens with a larger weight α_t contribute more."},
      // Algorithm 4: Attention
      {{4, 1}, "Compute a query for every token of X at once: Q has one column per primary token (b_q is added to "
               "every column)."},
      {{4, 2}, "Compute a key for every token of the context Z: K has one column per context token."},
      {{4, 3}, "Compute a value for every context token: V has one column per context token, and these columns are "
               "what gets mixed."},
      {{4, 4}, "Score every pair of a context token and a primary token at once: S[t_z, t_x] is the dot product of "
               "key t_z with query t_x."},
      {{4, 5}, "Rule out the pairs the mask forbids (in GPT, looking at later tokens) by setting their score to −∞, "
               "so that they get a weight of exactly 0 after the softmax."},
      {{4, 6}, "Divide the scores by √d_attn, turn each column into attention weights with a softmax, and mix the "
               "value columns with them: each output column is a weighted average of values."},
      // Algorithm 5: MHAttention
      {{5, 1}, "Repeat for each of the H heads; every head has its own query, key and value weights."},
      {{5, 2}, "Run one attention head (Algorithm 4). Different heads can learn to attend to different things."},
      {{5, 3}, "Stack the H heads' outputs on top of each other into one tall matrix Y."},
      {{5, 4}, "Mix the heads' outputs with the output weights W_o and add the bias b_o: the result has one column "
               "per token again, of the size the next layer expects."},
      // Algorithm 6: layer_norm
      {{6, 1}, "Compute the mean m of the d_e entries of e."},
      {{6, 2}, "Compute the variance v: the average squared distance of the entries from their mean m."},
      {{6, 3}, "Subtract the mean and divide by the standard deviation, so the entries have mean 0 and variance 1; "
               "then scale each entry by γ and shift it by β, both learned. Stepformer divides by √(v + ε), which "
               "is never 0."},
      // Algorithm 7: Unembedding
      {{7, 1}, "Multiply the vector by W_u to get one score per token of the vocabulary, then turn the scores into "
               "probabilities with a softmax: p is a distribution over the vocabulary."},
      // Algorithm 8: EDTransformer
      {{8, 1}, "Count the tokens of the context sequence z: ℓ_z is its length."},
      {{8, 2}, "Embed each context token: its token embedding plus the embedding of its position."},
      {{8, 3}, "Put the context vectors side by side: Z has one column per context token."},
      {{8, 4}, "Run the encoder's layers one after another."},
      {{8, 5}, "Let every context token attend to every other one (no mask: the encoder sees the whole sequence) "
               "and add the result to Z, a residual connection."},
      {{8, 6}, "Normalise each column of Z. This model normalises after the residual addition (post-LN)."},
      {{8, 7}, "A two-layer MLP with ReLU, applied to every column separately and added to Z as a residual."},
      {{8, 8}, "Normalise each column of Z again."},
      {{8, 9}, "End of an encoder layer: go back to line 4 for the next l."},
      {{8, 10}, "Count the tokens of the primary sequence x: ℓ_x is its length."},
      {{8, 11}, "Embed each token of x: its token embedding plus the embedding of its position."},
      {{8, 12}, "Put these vectors side by side: X has one column per token of x."},
      {{8, 13}, "Run the decoder's layers one after another (the paper writes i here but means l)."},
      {{8, 14}, "Causal self-attention: each token of x attends only to itself and the tokens before it; the result "
                "is added to X as a residual."},
      {{8, 15}, "Normalise each column of X."},
      {{8, 16}, "Cross-attention: each token of x attends to all the encoded context tokens in Z. This is how the "
                "output comes to depend on the input sequence."},
      {{8, 17}, "Normalise each column of X."},
      {{8, 18}, "A two-layer MLP with ReLU on every column, added to X as a residual."},
      {{8, 19}, "Normalise each column of X."},
      {{8, 20}, "End of a decoder layer: go back to line 13 for the next layer."},
      {{8, 21}, "Turn each column of X into scores over the vocabulary and then into probabilities: column t is the "
                "model's guess for the next token x[t+1]."},
      // Algorithm 9: ETransformer
      {{9, 1}, "Count the tokens of x: ℓ is the sequence length."},
      {{9, 2}, "Embed each token: its token embedding plus the embedding of its position."},
      {{9, 3}, "Put the vectors side by side: X has one column per token."},
      {{9, 4}, "Run the L layers one after another."},
      {{9, 5}, "Every token attends to every token, before and after it (no mask), and the result is added to X as "
               "a residual."},
      {{9, 6}, "Normalise each column of X (post-LN: after the residual addition)."},
      {{9, 7}, "A two-layer MLP with GELU on every column, added to X as a residual."},
      {{9, 8}, "Normalise each column of X again."},
      {{9, 9}, "End of a layer: go back to line 4 for the next l."},
      {{9, 10}, "One more linear layer with GELU; from here on each column has d_f entries."},
      {{9, 11}, "A final layer norm of each column."},
      {{9, 12}, "Turn each column into probabilities over the vocabulary: column t is the model's guess for the "
                "token at position t, which is what matters where that token was masked."},
      // Algorithm 10: DTransformer
      {{10, 1}, "Count the tokens of the input: ℓ is the sequence length."},
      {{10, 2}, "For each position t, look up the token's embedding column and add the position's embedding column."},
      {{10, 3}, "Put the ℓ vectors side by side: X has one column per token."},
      {{10, 4}, "Repeat the transformer block once per layer."},
      {{10, 5}, "Normalise each token's column before attention (pre-LN, as in GPT-2)."},
      {{10, 6}, "Each token gathers information from itself and earlier tokens (the causal mask), added to X as a "
                "residual."},
      {{10, 7}, "Normalise each token's column again, before the MLP."},
      {{10, 8}, "A two-layer MLP with GELU, applied to every token separately, added to X as a residual."},
      {{10, 9}, "End of a layer: go back to line 4 for the next l."},
      {{10, 10}, "A final layer norm of each column."},
      {{10, 11}, "Project each column to one score per vocabulary entry and turn the scores into probabilities: "
                 "column t is the model's guess for the next token x[t+1]."},
      // Algorithm 11: EDTraining
      {{11, 1}, "Go over the whole dataset N_epochs times."},
      {{11, 2}, "Take the training pairs (z_n, x_n) one at a time."},
      {{11, 3}, "Count the tokens of the target sequence x_n."},
      {{11, 4}, "Run the encoder-decoder forward pass (Algorithm 8): P holds the model's next-token distributions."},
      {{11, 5}, "The loss adds up, over the positions, minus the log of the probability the model gave to the token "
                "that really comes next: it is small when the model predicted well."},
      {{11, 6}, "Gradient descent: move every parameter a small step η against the gradient of the loss."},
      {{11, 7}, "End of the pass over the data."},
      {{11, 8}, "End of an epoch."},
      {{11, 9}, "Return the trained parameters."},
      // Algorithm 12: ETraining
      {{12, 1}, "Go over the whole dataset N_epochs times."},
      {{12, 2}, "Take the training sequences one at a time."},
      {{12, 3}, "Count the tokens of x_n."},
      {{12, 4}, "Visit every position of the sequence…"},
      {{12, 5}, "…and hide its token behind mask_token with probability p_mask; otherwise keep it."},
      {{12, 6}, "End of the masking loop."},
      {{12, 7}, "Remember which positions were masked: the model is scored only on those."},
      {{12, 8}, "Run the encoder-only model (Algorithm 9) on the masked sequence."},
      {{12, 9}, "The loss is minus the log-probability of the original tokens at the masked positions: the model "
                "must guess what was hidden from the words on both sides."},
      {{12, 10}, "Gradient descent: move every parameter a small step η against the gradient of the loss."},
      {{12, 11}, "End of the pass over the data."},
      {{12, 12}, "End of an epoch."},
      {{12, 13}, "Return the trained parameters."},
      // Algorithm 13: DTraining
      {{13, 1}, "Go over the whole dataset N_epochs times."},
      {{13, 2}, "Take the training sequences one at a time."},
      {{13, 3}, "Count the tokens of x_n."},
      {{13, 4}, "Run the decoder-only forward pass (Algorithm 10): column t of P is the guess for token t+1."},
      {{13, 5}, "The loss adds up, over positions 1 to ℓ−1, minus the log of the probability the model gave to the "
                "token that really comes next."},
      {{13, 6}, "Gradient descent: move every parameter a small step η against the gradient of the loss (in "
                "practice Adam is used instead, §7)."},
      {{13, 7}, "End of the pass over the data."},
      {{13, 8}, "End of an epoch."},
      {{13, 9}, "Return the trained parameters."},
      // Algorithm 14: DInference
      {{14, 1}, "Remember the prompt's length ℓ: the generated tokens start after it."},
      {{14, 2}, "Generate ℓ_gen tokens, one per pass of this loop."},
      {{14, 3}, "Run the whole transformer (Algorithm 10) on everything so far: the prompt plus the tokens "
                "generated until now."},
      {{14, 4}, "Take the last column of P: the model's distribution p over the next token."},
      {{14, 5}, "Sharpen or flatten p with the temperature τ and draw a token y from the result q (τ = 0: take the "
                "most likely token)."},
      {{14, 6}, "Append the drawn token to x, so that the next pass sees it."},
      {{14, 7}, "End of the loop: go back to line 2 for the next token."},
      {{14, 8}, "Return only the generated tokens, without the prompt."},
      // Algorithm 15: EDInference
      {{15, 1}, "Start the output with bos_token, the beginning-of-sequence token."},
      {{15, 2}, "y holds the last token drawn; 0 is only a placeholder that is not eos_token."},
      {{15, 3}, "Keep generating until the model draws eos_token, the end-of-sequence token."},
      {{15, 4}, "Run the encoder-decoder (Algorithm 8) on the input z and the output so far."},
      {{15, 5}, "Take the column of the last output token: the distribution p over the next token."},
      {{15, 6}, "Draw the next token y from q ∝ p^(1/τ), p sharpened or flattened by the temperature τ (τ = 0: "
                "take the most likely token)."},
      {{15, 7}, "Append the drawn token to the output."},
      {{15, 8}, "End of the loop. Nothing here stops it if eos_token never comes: a real implementation caps the "
                "length."},
      {{15, 9}, "Return the output sequence."},
  };
  if (alg == algs::flash_attention) {  // Algorithm 4-F, not in the paper (flash_listing.cpp)
    const char* flash = explain_flash_line(line);
    return flash ? flash : "";
  }
  if (alg == algs::speculative_decoding) {  // Algorithm 14-S, not in the paper (speculative_listing.cpp)
    const char* spec = explain_speculative_line(line);
    return spec ? spec : "";
  }
  if (alg == algs::random_feature_attention) {  // Algorithm 4-R, not in the paper (rfa_listing.cpp)
    const char* rfa = explain_rfa_line(line);
    return rfa ? rfa : "";
  }
  auto it = text.find({alg, line});
  return it == text.end() ? "" : it->second;
}

}  // namespace sf
