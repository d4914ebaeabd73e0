#pragma once

#include <QJsonArray>
#include <QWidget>

class QLabel;

namespace loopscope {

class JsonView;

// The code_interpreter_call items added to the final response, exactly as sent to the client.
class InjectedPanel : public QWidget {
    Q_OBJECT
public:
    explicit InjectedPanel(QWidget *parent = nullptr);

    JsonView *jsonView() const { return m_json; }
    QJsonArray items() const { return m_items; }

public slots:
    void setItems(const QJsonArray &items);

private:
    QLabel *m_summary;
    JsonView *m_json;
    QJsonArray m_items;
};

} // namespace loopscope
