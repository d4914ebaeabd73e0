#pragma once

namespace loopscope {

// Lowers the calling thread's CPU priority (Linux: the per-thread nice value, 0..19; elsewhere
// a no-op). QThread::setPriority cannot do this on Linux: SCHED_OTHER has a single priority, so
// Qt ignores every level but IdlePriority (SCHED_IDLE, which starves under load). Returns true
// when the niceness was set.
bool setCurrentThreadNiceness(int niceness);

} // namespace loopscope
