// Command gopager is an MCP stdio server built with the official Go SDK
// whose tools/list is paginated (page size 4, 11 tools), for airlock's
// real-peer tests: a client that follows nextCursor through airlock must see
// the same pages and cursors as direct. It answers both protocol revisions
// (2026-07-28 with server/discover, and 2025-11-25 with initialize).
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Message string `json:"message"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "gopager", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: 4})
	for i := range 10 {
		name := fmt.Sprintf("page-tool-%02d", i)
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "filler tool " + name},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes its message"},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Message}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
