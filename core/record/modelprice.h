#pragma once

#include <QtGlobal>

namespace loopscope {

// What a model costs, USD per token: LiteLLM's model_info for a configured model, else the
// built-in table (ModelPriceTable).
struct ModelPrice {
    // How a dialect reports cached prompt tokens: OpenAI counts them inside input_tokens
    // (cached_tokens is a part of it), Anthropic beside it (cache_read_input_tokens and
    // cache_creation_input_tokens are not in input_tokens).
    enum class CacheCounting { InsideInput, BesideInput };

    double inputPerToken = 0;
    double outputPerToken = 0;
    double cacheReadPerToken = -1;  // < 0: not given
    double cacheWritePerToken = -1; // < 0: not given

    // The cost of an answer's tokens. A cache price not given is, for OpenAI-style counts, the
    // input price (no discount assumed), and for Anthropic-style counts Anthropic's published
    // multipliers of the input price (cache reads 0.1×, 5-minute cache writes 1.25×).
    double cost(qint64 input, qint64 output, qint64 cacheRead, qint64 cacheWrite,
                CacheCounting counting) const {
        if (counting == CacheCounting::InsideInput) {
            const double read = cacheReadPerToken >= 0 ? cacheReadPerToken : inputPerToken;
            const qint64 uncached = qMax<qint64>(0, input - cacheRead);
            return double(uncached) * inputPerToken + double(cacheRead) * read +
                   double(output) * outputPerToken;
        }
        const double read = cacheReadPerToken >= 0 ? cacheReadPerToken : inputPerToken * 0.1;
        const double write = cacheWritePerToken >= 0 ? cacheWritePerToken : inputPerToken * 1.25;
        return double(input) * inputPerToken + double(cacheRead) * read +
               double(cacheWrite) * write + double(output) * outputPerToken;
    }
};

} // namespace loopscope
