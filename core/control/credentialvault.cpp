#include "control/credentialvault.h"

namespace loopscope {

bool CredentialVault::isCredentialHeader(const QByteArray &lowerName) {
    return lowerName == "authorization" || lowerName == "api-key" || lowerName == "x-api-key";
}

void CredentialVault::remember(const QString &flowId, const HttpRequest &request) {
    if (flowId.isEmpty() || m_byFlow.contains(flowId))
        return;
    HttpHeaders kept;
    for (const auto &h : request.headers)
        if (isCredentialHeader(h.first))
            kept.append(h);
    m_byFlow.insert(flowId, kept);
    m_order.enqueue(flowId);
    while (m_order.size() > kCapacity)
        m_byFlow.remove(m_order.dequeue());
}

} // namespace loopscope
