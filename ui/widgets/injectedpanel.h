#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QWidget>

class QLabel;

namespace loopscope {

class JsonView;

// The code_interpreter_call items added to the final response, exactly as sent to the client:
// read from the flow's client_response (its JSON body, or its SSE events when streamed).
class InjectedPanel : public QWidget {
    Q_OBJECT
public:
    explicit InjectedPanel(QWidget *parent = nullptr);

    JsonView *jsonView() const { return m_json; }
    QLabel *summaryLabel() const { return m_summary; }
    QJsonArray items() const { return m_items; }

    // The code_interpreter_call items of a flow's client_response (spec flow JSON).
    static QJsonArray injectedItems(const QJsonObject &flow);

public slots:
    // The full flow (summary + hops); an empty object clears the panel.
    void setFlow(const QJsonObject &flow);
    void setItems(const QJsonArray &items);

private:
    QLabel *m_summary;
    JsonView *m_json;
    QJsonArray m_items;
};

} // namespace loopscope
