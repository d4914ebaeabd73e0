#pragma once

#include "http/httprequest.h"

#include <QHash>
#include <QQueue>
#include <QString>

namespace loopscope {

// The client's credential headers of recent flows of this process, so that a replay can go out
// "with the original client's credentials" although the store only keeps them masked. Memory
// only, never written anywhere, bounded (oldest forgotten first). Lives on the proxy thread.
class CredentialVault {
public:
    static constexpr int kCapacity = 2048;

    // Keeps the credential headers of `request` (authorization, api-key, x-api-key) if any.
    void remember(const QString &flowId, const HttpRequest &request);
    // Whether credentials of `flowId` are known (also true for a flow sent without any).
    bool knows(const QString &flowId) const { return m_byFlow.contains(flowId); }
    HttpHeaders credentials(const QString &flowId) const { return m_byFlow.value(flowId); }
    static bool isCredentialHeader(const QByteArray &lowerName);
    int size() const { return int(m_byFlow.size()); }

private:
    QHash<QString, HttpHeaders> m_byFlow;
    QQueue<QString> m_order;
};

} // namespace loopscope
