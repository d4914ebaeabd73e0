#pragma once

#include <QString>

namespace loopscope {

// 128 bits from the system's CSPRNG as 32 lowercase hex digits: the random part of every id
// Loopscope mints (sandbox keys, call and item ids).
QString randomHex128();
// An id as the vendors write them: `prefix` then randomHex128() ("resp_…", "msg_…").
QString randomId(const char *prefix);

} // namespace loopscope
