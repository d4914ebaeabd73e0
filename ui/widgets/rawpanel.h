#pragma once

#include "models/rawsections.h"

#include <QWidget>

class QListWidget;

namespace loopscope {

class JsonView;

// The request's JSON documents on the wire (client request, each upstream request and
// response, final response), secrets masked, each as a tree and as pretty text with Copy.
class RawPanel : public QWidget {
    Q_OBJECT
public:
    explicit RawPanel(QWidget *parent = nullptr);

    QListWidget *sectionList() const { return m_list; }
    JsonView *jsonView() const { return m_json; }

public slots:
    void setRecord(const loopscope::RequestRecord &record);
    void clear();

private:
    void showSection(int row);

    QListWidget *m_list;
    JsonView *m_json;
    QList<RawSections::Section> m_sections;
    QString m_requestId;
};

} // namespace loopscope
