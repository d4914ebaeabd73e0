#pragma once

namespace loopscope {

// The three wire formats Loopscope meets (dialects.md). Apart from dialect.h so the model's
// values can say which dialect their kept wire JSON is in.
enum class Dialect { Responses, ChatCompletions, Messages };

} // namespace loopscope
