// SPDX-License-Identifier: BSD-2-Clause
#include "mmaemu/reports/escape_xml.hpp"

#include "mmaemu/reports/escape_html.hpp"

namespace mmaemu::reports {

std::string xml_escape(std::string_view s) {
  return entity_escape(s, "&apos;");
}

} // namespace mmaemu::reports
