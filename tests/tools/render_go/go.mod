module sunny/render_go

go 1.19
