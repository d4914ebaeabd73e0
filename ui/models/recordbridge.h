#pragma once

#include "models/requestrecord.h"

#include <QJsonObject>

namespace loopscope {

// Until the window reads flows through FlowDetailLoader, the Loop and Code panels can still be
// fed from the RequestsModel: these build the flow shape (FlowQuery::flow: summary + hops) from
// a RequestRecord. TODO(lead): delete once MainWindow calls setFlow/applyLiveEvents directly.
namespace RecordBridge {
QJsonObject flowOf(const RequestRecord &record);
QJsonObject codeRunHopOf(const CodeRunRecord &run);
} // namespace RecordBridge

} // namespace loopscope
