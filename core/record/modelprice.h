#pragma once

namespace loopscope {

// LiteLLM's model_info prices for one client-facing model name (USD per token).
struct ModelPrice {
    double inputPerToken = 0;
    double outputPerToken = 0;
};

} // namespace loopscope
